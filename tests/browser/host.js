// The test host: a page built on the MCP Apps package's own host bridge (AppBridge), the way a
// desktop host renders a view (the view's HTML in an iframe, its messages bridged to an MCP client
// of vitals-mcp over streamable HTTP). tests/tests/e2e/apps_browser.rs bundles it with esbuild and
// drives it in headless Chromium. Query: ?mcp=<path>&tool=<name>&args=<json>&theme=light|dark, and
// &proxy=<url> to load the view as a web host does, through a sandbox proxy on another origin.
import { AppBridge, PostMessageTransport, getToolUiResourceUri, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const q = new URLSearchParams(location.search);
const theme = q.get("theme") || "light";
const args = JSON.parse(q.get("args") || "{}");
const tool = q.get("tool");
const info = { name: "vitals-test-host", version: "1.0.0" };
// What the page saw, for the test to read: every tools/call (the view's too), and when.
window.__host = { calls: [], errors: [], started: performance.now(), stage: "start" };
const stage = (s) => { window.__host.stage = s; };

async function main() {
  const client = new Client(info, { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(q.get("mcp"), location.href)));
  stage("connected");
  // A page left closes its session, as a host closing a conversation would: the next page gets
  // the browser's connections to the server (six a host) free.
  window.addEventListener("pagehide", () => { client.close(); });
  // Every tools/call, the host's own and those the bridge forwards for the view.
  const request = client.request.bind(client);
  client.request = (req, ...rest) => {
    if (req.method === "tools/call") window.__host.calls.push({ name: req.params.name, arguments: req.params.arguments, at: performance.now() });
    return request(req, ...rest);
  };
  const t = (await client.listTools()).tools.find((x) => x.name === tool);
  if (!t) throw new Error("the server lists no tool " + tool);
  window.__host.tools = (await client.listTools()).tools.map((x) => ({ name: x.name, ui: x._meta && x._meta.ui }));
  const uri = getToolUiResourceUri(t);
  if (!uri) throw new Error(tool + " has no view for this host");
  stage("listed");
  const res = await client.readResource({ uri });
  stage("read " + uri);
  const content = res.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error("MIME " + content.mimeType);
  const iframe = document.createElement("iframe");
  iframe.id = "view";
  document.body.append(iframe);
  const caps = client.getServerCapabilities();
  const bridge = new AppBridge(client, info, { serverTools: caps.tools, serverResources: caps.resources }, {
    hostContext: { theme, displayMode: "inline", containerDimensions: { width: 680, maxHeight: 6000 }, timeZone: "UTC", locale: "en-GB" },
  });
  window.__host.sizes = [];
  bridge.onsizechange = ({ height }) => { if (height) { iframe.style.height = height + "px"; window.__host.sizes.push(height); } };
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  const proxy = q.get("proxy");
  const timing = (window.__host.timing = {});
  if (proxy) {
    // A web host: the proxy (another origin) says it is ready, then gets the HTML and the CSP the
    // resource declared; the view's document is out of this page's reach, as in a real host.
    const ui = (content._meta && content._meta.ui) || {};
    bridge.onsandboxready = () => { stage("proxy ready"); bridge.sendSandboxResourceReady({ html: content.text, sandbox: "allow-scripts", csp: ui.csp }); };
    await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    iframe.src = proxy;
    stage("proxy loading");
    await initialized;
    stage("view initialized");
  } else {
    // Listening before the view loads: its first message (ui/initialize) comes as its script runs.
    await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    iframe.srcdoc = content.text;
    // When the view began loading, got its tool result, and painted its drawing (the frame after
    // it said it had drawn), on this page's clock: the bench's time to first chart.
    timing.loading = performance.now();
    stage("view loading");
    await initialized;
    stage("view initialized");
    const main = iframe.contentDocument.getElementById("view");
    new MutationObserver(() => {
      if (main.dataset.drawn === "1" && !timing.drawn) requestAnimationFrame(() => { timing.drawn = timing.drawn || performance.now(); });
    }).observe(main, { attributes: true, attributeFilter: ["data-drawn"] });
  }
  bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name: tool, arguments: args });
  window.__host.result = result.structuredContent;
  timing.result = performance.now();
  bridge.sendToolResult(result);
}

main().catch((e) => { window.__host.errors.push(String(e && e.stack || e)); });
