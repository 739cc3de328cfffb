// Drive a streamtools endpoint with the AI SDK's own chat client.
//
// `AbstractChat` is the framework-free core that React's `useChat` wraps: it
// POSTs the conversation with `DefaultChatTransport`, validates every chunk
// against the SDK's schema and folds the UI message stream into messages.
// We give it the plain state object useChat would keep, send each prompt from
// the command line in turn, and print the resulting messages as JSON.
//
// usage: [AI_PACKAGE=ai5] [RESUME=1] [FILES=JSON] node chat_client.mjs URL PROMPT [PROMPT...]
// The SDK under test: "ai" (6.x) unless AI_PACKAGE names another installed
// major, e.g. "ai5" (package.json installs ai 5 under that alias).
import { createRequire } from "node:module";

const sdk = process.env.AI_PACKAGE ?? "ai";
const { AbstractChat, DefaultChatTransport } = await import(sdk);
const sdkVersion = createRequire(import.meta.url)(`${sdk}/package.json`).version;

class PlainState {
  constructor() {
    this.status = "ready";
    this.error = undefined;
    this.messages = [];
  }
  pushMessage(message) { this.messages = this.messages.concat(message); }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) {
    this.messages = [...this.messages.slice(0, index), this.snapshot(message), ...this.messages.slice(index + 1)];
  }
  snapshot(thing) { return structuredClone(thing); }
}

class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new PlainState() }); }
}

const [url, ...prompts] = process.argv.slice(2);
const errors = [];
const data = [];  // the data parts onData got (transient ones go nowhere else)
const chat = new Chat({
  transport: new DefaultChatTransport({ api: url }),
  onError: (error) => errors.push(String(error && error.message || error)),
  onData: (part) => data.push(part),
});
// RESUME=1: first what useChat({ resume: true }) does on mount
if (process.env.RESUME === "1") {
  await chat.resumeStream();
}
// FILES='[{"type":"file","mediaType":…,"filename":…,"url":"data:…"}]': attached to the
// first prompt, as useChat's sendMessage({ text, files }) attaches a user's files
let files = process.env.FILES ? JSON.parse(process.env.FILES) : undefined;
for (const text of prompts) {
  await chat.sendMessage(files ? { text, files } : { text });
  files = undefined;
}
process.stdout.write(
  JSON.stringify({ sdkVersion, status: chat.status, errors, data, messages: chat.messages }),
);
