// Helpers of the packed-package browser tests: the shared static server and Chromium
// (tests/support/chromium.mjs), and loading a page to wait for what it reports.
export { launchChromium, serveDir } from '../support/chromium.mjs';

/** Opens `url`, waits for `check` (a page function) to return a truthy value, returns it. */
export async function loadAndWait(browser, url, check, timeout = 60_000) {
  const page = await browser.newPage();
  const errors = [];
  // An uncaught page error fails the wait at once rather than after `timeout`.
  let pageFailed;
  const failed = new Promise((_, reject) => { pageFailed = reject; });
  failed.catch(() => {}); // an error after the wait is reported through `errors`
  page.on('pageerror', (e) => {
    errors.push(e.message);
    pageFailed(new Error(`uncaught page error: ${e.message}`));
  });
  try {
    await page.goto(url);
    const waiting = page.waitForFunction(check, null, { timeout });
    waiting.catch(() => {}); // lost the race to a page error
    const handle = await Promise.race([waiting, failed]).catch((e) => {
      throw new Error(`${e.message}; page errors: ${JSON.stringify(errors)}`);
    });
    const value = await handle.jsonValue();
    return { value, errors };
  } finally {
    await page.close();
  }
}
