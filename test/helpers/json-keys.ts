// test/helpers/json-keys.ts: finds keys repeated inside one object of a JSON text. JSON.parse keeps the
// last of two equal keys silently, so log lines are scanned as raw text (test/integration/log-keys.test.ts,
// start-banner.test.ts).

/** Keys that appear twice in one object of a JSON text, at any depth (JSON.parse would hide them). */
export function repeatedKeys(text: string): string[] {
  const out: string[] = [];
  const stack: Array<Set<string> | null> = [];
  let i = 0;
  let expectKey = false;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const str = JSON.parse(text.slice(i, j + 1)) as string;
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        if (top.has(str)) out.push(str);
        top.add(str);
      }
      expectKey = false;
      i = j + 1;
      continue;
    }
    if (c === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (c === '[') stack.push(null);
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',') expectKey = stack[stack.length - 1] !== null;
    i++;
  }
  return out;
}
