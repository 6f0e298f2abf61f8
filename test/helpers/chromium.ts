// test/helpers/chromium.ts: headless Chromium (Debian's `chromium` package) driven by playwright-core,
// with a fresh user-data-dir per launch. Tests skip with `chromiumSkipReason` where no binary exists (in CI only
// when WARREN_TEST_ABSENT names chromium: test/helpers/absent.ts).
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { skipUnlessRequired } from './absent.ts';
import { tmpDir } from './tmp-dir.ts';

export const CHROMIUM_PATH = process.env.WARREN_CHROMIUM ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or false when they can. */
export const chromiumSkipReason: string | false = skipUnlessRequired(
  'chromium',
  !existsSync(CHROMIUM_PATH) && `no Chromium binary at ${CHROMIUM_PATH} (install Debian's chromium package: apt-get install -y chromium)`,
);

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser context on a fresh profile; `close` ends the browser and removes the profile. */
export async function launchChromium(
  viewport = { width: 1440, height: 860 },
  extraArgs: readonly string[] = [],
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await tmpDir('warren-chromium-');
  const context = await chromium.launchPersistentContext(profile.path, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...FLAGS, ...extraArgs],
    viewport,
  });
  return {
    context,
    close: async () => {
      await context.close();
      await profile.cleanup();
    },
  };
}

/**
 * A page in a fresh browser (closed when `t` ends, or earlier by the test: before its servers, whose close waits
 * for the browser's connections), and the page's uncaught errors as they happen (a test expects none).
 */
export async function openPage(
  t: TestContext,
): Promise<{ browser: Awaited<ReturnType<typeof launchChromium>>; page: Page; pageErrors: string[] }> {
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  return { browser, page, pageErrors };
}
