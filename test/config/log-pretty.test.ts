// test/config/log-pretty.test.ts: the readable log format (config/log-pretty.ts) through the real root
// logger (config/logger.ts): time, level, [component], message, key=value pairs, an error's stack below
// its line, redaction kept, colour only when asked, and the format choice of `--log-format`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, resolveLogFormat, type LogLevel } from '../../config/logger.ts';
import { prettyLine } from '../../config/log-pretty.ts';

function capture(level: LogLevel = 'info', color = false) {
  let text = '';
  const logger = createLogger({ level, format: 'pretty', color, destination: { write: (chunk: string) => void (text += chunk) } });
  return { logger, text: () => text };
}

const TIME = String.raw`\d{2}:\d{2}:\d{2}\.\d{3}`;

describe('pretty log lines', () => {
  it('print time, level, component, message, then the fields as key=value', () => {
    const { logger, text } = capture();
    logger
      .child({ component: 'sessions' })
      .info({ session_id: 'abc', n: 3, words: 'two words', ok: true, nested: { a: [1] } }, 'turn done');
    assert.match(
      text(),
      new RegExp(`^${TIME} INFO  \\[sessions\\] turn done session_id=abc n=3 words="two words" ok=true nested=\\{"a":\\[1\\]\\}\\n$`),
    );
    assert.doesNotMatch(text(), /service=/, 'the base binding is not repeated on every line');
  });

  it('pad the level, and a line without a component starts with its message', () => {
    const { logger, text } = capture('debug');
    logger.debug('d');
    logger.warn({ empty: '' }, 'w');
    assert.deepEqual(
      text()
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(/^\S+ /, '')),
      ['DEBUG d', 'WARN  w empty=""'],
    );
  });

  it('print an error stack indented under its line, other error fields inline', () => {
    const { logger, text } = capture();
    const err = Object.assign(new Error('disk on fire'), { code: 'EFIRE' });
    logger.child({ component: 'store' }).error({ err, path: '/x' }, 'commit failed');
    const [first, second, ...frames] = text().trimEnd().split('\n');
    assert.match(first ?? '', new RegExp(`^${TIME} ERROR \\[store\\] commit failed err\\.code=EFIRE path=/x$`));
    assert.equal(second, '    Error: disk on fire');
    assert.ok(frames.length > 0, 'stack frames follow');
    for (const frame of frames) assert.match(frame, /^ {4}\s*at /, 'each frame indented under the line');
  });

  it('keep credentials redacted', () => {
    const { logger, text } = capture();
    logger.info({ headers: { authorization: 'Bearer s3cret' }, api_key: 'k-1' }, 'call');
    assert.doesNotMatch(text(), /s3cret|k-1/);
    assert.match(text(), /api_key=\[redacted\]/);
  });

  it('colour only when asked', () => {
    const plain = capture();
    plain.logger.info('x');
    assert.ok(!plain.text().includes('\u001b['), 'no escape codes');
    const coloured = capture('info', true);
    coloured.logger.info('x');
    assert.ok(coloured.text().includes('\u001b[32mINFO '), coloured.text());
  });

  it('pass a line that is not a JSON object through unchanged', () => {
    assert.equal(prettyLine('not json', false), 'not json\n');
    assert.equal(prettyLine('[1,2]', false), '[1,2]\n');
  });

  it('auto is pretty on a terminal and JSON lines elsewhere; an explicit format wins', () => {
    assert.equal(resolveLogFormat('auto', true), 'pretty');
    assert.equal(resolveLogFormat('auto', false), 'json');
    assert.equal(resolveLogFormat('pretty', false), 'pretty');
    assert.equal(resolveLogFormat('json', true), 'json');
  });
});
