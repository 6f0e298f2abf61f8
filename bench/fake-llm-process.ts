// bench/fake-llm-process.ts: the fake LLM (fake-llm.ts) in a process of its own, for the inflight scenario:
// ten thousand held-open streams plus ten thousand SSE subscribers exceed one process's descriptor limit,
// and a fake sharing the load generator's event loop would add its own delay to token-to-client latency.
// Knobs come as JSON in argv[2]; the URL goes back over IPC; {type:'stats'} answers the fake's counters;
// {type:'release'} starts the held streams (knob `hold`).
// It inherits the bench process's CPU pinning (core 1).
import { startFakeLlm, type FakeLlmKnobs } from './fake-llm.ts';

const knobs = JSON.parse(process.argv[2] ?? '{}') as Partial<FakeLlmKnobs>;
const fake = await startFakeLlm(knobs);
process.send?.({ type: 'listening', url: fake.url });
process.on('message', (m: { type: string; knobs?: Partial<FakeLlmKnobs> }) => {
  if (m.type === 'configure' && m.knobs) {
    fake.configure(m.knobs);
    process.send?.({ type: 'configured' });
  } else if (m.type === 'release') {
    fake.release();
    process.send?.({ type: 'released' });
  } else if (m.type === 'stats') process.send?.({ type: 'stats', stats: fake.stats });
  else if (m.type === 'stop')
    fake.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
});
process.on('disconnect', () => process.exit(0));
