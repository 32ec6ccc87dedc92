// What tests/docs/test_site.py reads of the built pages in a real browser, through the DevTools protocol
// (no driver to install: Node's WebSocket, Debian's chromium).
//
// usage: node [--experimental-websocket] cdp_probe.mjs CHROMIUM PROFILE OUTDIR EXPRESSION URL...
//
// Opens each URL in turn in one headless chromium (1280 px wide, every host name but 127.0.0.1 unresolvable),
// waits for its load event, evaluates EXPRESSION (the body of an async function returning JSON-able data),
// saves a screenshot of the page's first 4,000 px as OUTDIR/<n>.png, and prints one JSON line per URL:
// {"url", "value", "error"}.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const [chromium, profile, outdir, expression, ...urls] = process.argv.slice(2);
const browser = spawn(chromium, [
  "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--hide-scrollbars", `--user-data-dir=${profile}`,
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--window-size=1280,1024",
  "--remote-debugging-port=0", "about:blank",
], { stdio: ["ignore", "ignore", "pipe"] });
const wsUrl = await new Promise((resolve, reject) => {
  let seen = "";
  browser.stderr.on("data", (chunk) => {
    seen += chunk;
    const found = seen.match(/DevTools listening on (ws:\/\/\S+)/);
    if (found) resolve(found[1]);
  });
  browser.on("exit", () => reject(new Error("chromium exited: " + seen.slice(-2000))));
});
const ws = new WebSocket(wsUrl);
await new Promise((r) => ws.addEventListener("open", r));
let next = 0;
const pending = new Map();
const listeners = [];
ws.addEventListener("message", (event) => {
  const message = JSON.parse(event.data);
  if (message.id !== undefined && pending.has(message.id)) {
    pending.get(message.id)(message);
    pending.delete(message.id);
  } else {
    listeners.forEach((l) => l(message));
  }
});
const send = (method, params = {}, sessionId = undefined) => new Promise((resolve, reject) => {
  const id = ++next;
  pending.set(id, (m) => (m.error ? reject(new Error(method + ": " + JSON.stringify(m.error))) : resolve(m.result)));
  ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
});
const { targetId } = await send("Target.createTarget", { url: "about:blank" });
const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
await send("Page.enable", {}, sessionId);
await send("Runtime.enable", {}, sessionId);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
for (const [index, url] of urls.entries()) {
  const loaded = new Promise((resolve) => {
    const l = (m) => { if (m.method === "Page.loadEventFired" && m.sessionId === sessionId) resolve(); };
    listeners.push(l);
  });
  await send("Page.navigate", { url }, sessionId);
  await Promise.race([loaded, sleep(20000)]);
  await sleep(300);
  const result = await send("Runtime.evaluate", {
    expression: `(async () => { ${expression} })()`, awaitPromise: true, returnByValue: true,
  }, sessionId);
  const metrics = await send("Page.getLayoutMetrics", {}, sessionId);
  const size = metrics.cssContentSize || metrics.contentSize;
  const shot = await send("Page.captureScreenshot", {
    format: "png", captureBeyondViewport: true,
    clip: { x: 0, y: 0, width: 1280, height: Math.min(Math.ceil(size.height), 4000), scale: 1 },
  }, sessionId);
  writeFileSync(`${outdir}/${index}.png`, Buffer.from(shot.data, "base64"));
  console.log(JSON.stringify({ url, value: result.result.value, error: result.exceptionDetails?.text ?? null }));
}
ws.close();
browser.kill();
