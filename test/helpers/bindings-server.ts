// test/helpers/bindings-server.ts: a real Warren server process (createApp, as main.ts runs it) for the
// work-binding kill -9 tests: every provider is the binding test model (binding-driver.ts), and a flow
// step whose prompt contains WARREN_TEST_HANG_TEXT never answers (the run stays in flight at the kill).
// The binding actor's test-only fault hook (WARREN_TEST_BINDING_HALT_AT, read from this environment)
// reports `{ binding_halted }` over IPC; IPC messages sent to this process are ignored, so a test's
// `request({ await_halt: true })` resolves with that report.
import { createApp } from '../../app.ts';
import { parseServeArgs } from '../../config/flags.ts';
import { createLogger } from '../../config/logger.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { bindingScript } from './binding-driver.ts';

const options = parseServeArgs(process.argv.slice(2).filter((a) => a !== 'serve'));
const logger = createLogger({ level: options.logLevel });
const hang = process.env.WARREN_TEST_HANG_TEXT;
const provider = createScriptedProvider(bindingScript(hang ? { text: hang } : undefined));
await createApp({ ...options, logger, providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider } });
process.on('message', () => {});
