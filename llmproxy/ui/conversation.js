// A request or an answer of any API read as one conversation: the system prompt, the tools, the messages, and
// in each message its parts (text, image, tool call, tool result, reasoning). What the page shows and what
// "what this turn added" compares.

/** The request body of `provider`'s API, read as a conversation. */
export function conversationOf(provider, operation, body) {
  if (!body || typeof body !== "object") return null;
  if (provider === "anthropic" || provider === "bedrock" && Array.isArray(body.messages)) return anthropic(body);
  if (provider === "gemini" || Array.isArray(body.contents)) return gemini(body);
  if (operation === "responses" || body.input !== undefined && !body.messages) return responses(body);
  if (Array.isArray(body.messages)) return chat(body);
  return null;
}

function text(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function anthropicParts(content) {
  if (typeof content === "string") return [{ kind: "text", text: content }];
  return (content ?? []).map((block) => {
    switch (block.type) {
      case "text":
        return { kind: "text", text: block.text };
      case "image":
        return { kind: "image", ...imageSource(block.source) };
      case "tool_use":
      case "server_tool_use":
        return { kind: "tool_call", id: block.id, name: block.name, args: text(block.input ?? {}) };
      case "tool_result":
        return { kind: "tool_result", id: block.tool_use_id, text: toolResult(block.content) };
      case "thinking":
        return { kind: "reasoning", text: block.thinking ?? "" };
      case "redacted_thinking":
        return { kind: "reasoning", text: "(redacted thinking)" };
      default:
        return { kind: "other", text: text(block) };
    }
  });
}

function toolResult(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((block) => (block.type === "text" ? block.text : text(block))).join("\n");
}

function imageSource(source) {
  if (source?.type === "base64") return { media: source.media_type, data: source.data };
  if (source?.type === "url") return { url: source.url };
  return { url: "" };
}

function anthropic(body) {
  const system = typeof body.system === "string" ? [body.system] : (body.system ?? []).map((block) => block.text ?? text(block));
  const tools = (body.tools ?? []).map((tool) => ({ name: tool.name ?? tool.type, definition: text(tool) }));
  const messages = (body.messages ?? []).map((message) => ({ role: message.role, parts: anthropicParts(message.content) }));
  return { system, tools, messages, cache: cachePaths(body) };
}

function chatParts(message) {
  const parts = [];
  const content = message.content;
  if (typeof content === "string") parts.push({ kind: "text", text: content });
  else
    for (const part of content ?? []) {
      if (part.type === "text" || part.type === "input_text") parts.push({ kind: "text", text: part.text });
      else if (part.type === "image_url") parts.push({ kind: "image", ...dataUrl(part.image_url?.url ?? "") });
      else parts.push({ kind: "other", text: text(part) });
    }
  if (message.reasoning_content) parts.unshift({ kind: "reasoning", text: message.reasoning_content });
  for (const call of message.tool_calls ?? []) {
    parts.push({ kind: "tool_call", id: call.id, name: call.function?.name, args: call.function?.arguments ?? "" });
  }
  if (message.role === "tool") return [{ kind: "tool_result", id: message.tool_call_id, text: parts.map((p) => p.text).join("\n") }];
  return parts;
}

function dataUrl(url) {
  const found = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return found ? { media: found[1], data: found[2] } : { url };
}

function chat(body) {
  const system = [];
  const messages = [];
  for (const message of body.messages) {
    if (message.role === "system" || message.role === "developer") system.push(chatParts(message).map((p) => p.text).join("\n"));
    else messages.push({ role: message.role, parts: chatParts(message) });
  }
  const tools = (body.tools ?? []).map((tool) => ({ name: tool.function?.name ?? tool.name ?? tool.type, definition: text(tool) }));
  return { system, tools, messages, cache: [] };
}

function responseItem(item) {
  if (item.type === "function_call") return { role: "assistant", parts: [{ kind: "tool_call", id: item.call_id, name: item.name, args: item.arguments }] };
  if (item.type === "function_call_output") return { role: "tool", parts: [{ kind: "tool_result", id: item.call_id, text: text(item.output) }] };
  if (item.type === "reasoning") return { role: "assistant", parts: [{ kind: "reasoning", text: (item.summary ?? []).map((s) => s.text).join("\n") }] };
  const content = item.content;
  const parts =
    typeof content === "string"
      ? [{ kind: "text", text: content }]
      : (content ?? []).map((part) =>
          part.type === "input_image"
            ? { kind: "image", ...dataUrl(part.image_url ?? "") }
            : part.text !== undefined
              ? { kind: "text", text: part.text }
              : { kind: "other", text: text(part) },
        );
  return { role: item.role ?? item.type, parts };
}

function responses(body) {
  const system = body.instructions ? [body.instructions] : [];
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : (body.input ?? []);
  const messages = [];
  for (const item of input) {
    if (item.role === "system" || item.role === "developer") system.push(responseItem(item).parts.map((p) => p.text).join("\n"));
    else messages.push(responseItem(item));
  }
  const tools = (body.tools ?? []).map((tool) => ({ name: tool.name ?? tool.type, definition: text(tool) }));
  return { system, tools, messages, cache: [] };
}

function geminiParts(parts) {
  return (parts ?? []).map((part) => {
    if (part.thought && part.text !== undefined) return { kind: "reasoning", text: part.text };
    if (part.text !== undefined) return { kind: "text", text: part.text };
    if (part.inlineData) return { kind: "image", media: part.inlineData.mimeType, data: part.inlineData.data };
    if (part.functionCall) return { kind: "tool_call", name: part.functionCall.name, args: text(part.functionCall.args ?? {}) };
    if (part.functionResponse) return { kind: "tool_result", id: part.functionResponse.name, text: text(part.functionResponse.response) };
    return { kind: "other", text: text(part) };
  });
}

function gemini(body) {
  const instruction = body.systemInstruction ?? body.system_instruction;
  const system = instruction ? [geminiParts(instruction.parts).map((p) => p.text).join("\n")] : [];
  const tools = (body.tools ?? []).flatMap((tool) =>
    (tool.functionDeclarations ?? tool.function_declarations ?? [tool]).map((d) => ({ name: d.name ?? Object.keys(d)[0], definition: text(d) })),
  );
  const messages = (body.contents ?? []).map((content) => ({ role: content.role ?? "user", parts: geminiParts(content.parts) }));
  return { system, tools, messages, cache: [] };
}

/** Where the body marks a prompt cache breakpoint (Anthropic's `cache_control`), as JSON paths. */
function cachePaths(body) {
  const found = [];
  const walk = (value, path) => {
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${path}[${index}]`));
    else if (value && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        if (key === "cache_control") found.push(path);
        else walk(item, `${path}.${key}`);
      }
    }
  };
  walk(body, "$");
  return found;
}

/** The answer's parts: from its JSON body, or its stream's events put together. */
export function answerOf(provider, operation, response) {
  if (!response) return [];
  const events = response.events;
  if (!events) {
    const body = response.body?.json;
    if (!body) return response.body?.text !== undefined ? [{ kind: "text", text: response.body.text }] : [];
    if (Array.isArray(body.content)) return anthropicParts(body.content);
    if (body.choices) return chatParts(body.choices[0]?.message ?? {});
    if (Array.isArray(body.output)) return body.output.flatMap((item) => responseItem(item).parts);
    if (body.candidates) return geminiParts(body.candidates[0]?.content?.parts);
    if (body.error) return [{ kind: "other", text: text(body.error) }];
    return [{ kind: "other", text: text(body) }];
  }
  return streamed(events);
}

/** A stream's events put together into the answer's parts. */
function streamed(events) {
  const blocks = []; // Anthropic's content blocks by index
  const chat = { text: "", reasoning: "", calls: [] };
  let done = null; // a whole answer some streams end with (Responses' response.completed)
  const gemini = [];
  for (const event of events) {
    const data = event.data ?? event.json ?? event.message;
    if (!data || typeof data !== "object") continue;
    if (data.type === "content_block_start") blocks[data.index] = { ...data.content_block, text: data.content_block.text ?? "", partial: "" };
    else if (data.type === "content_block_delta") {
      const block = (blocks[data.index] ??= { type: "text", text: "", partial: "" });
      const delta = data.delta ?? {};
      if (delta.type === "text_delta") block.text += delta.text;
      else if (delta.type === "input_json_delta") block.partial += delta.partial_json;
      else if (delta.type === "thinking_delta") block.thinking = (block.thinking ?? "") + delta.thinking;
    } else if (data.choices) {
      const delta = data.choices[0]?.delta ?? {};
      chat.text += delta.content ?? "";
      chat.reasoning += delta.reasoning_content ?? "";
      for (const call of delta.tool_calls ?? []) {
        const kept = (chat.calls[call.index ?? 0] ??= { id: "", name: "", args: "" });
        kept.id ||= call.id ?? "";
        kept.name += call.function?.name ?? "";
        kept.args += call.function?.arguments ?? "";
      }
    } else if (data.type === "response.completed" && data.response) done = data.response;
    else if (data.candidates) gemini.push(...(data.candidates[0]?.content?.parts ?? []));
  }
  if (done) return done.output.flatMap((item) => responseItem(item).parts);
  if (blocks.length)
    return anthropicParts(
      blocks.filter(Boolean).map((block) =>
        block.type === "tool_use" ? { ...block, input: parsed(block.partial) ?? block.input } : block,
      ),
    );
  if (gemini.length) return geminiParts(mergedText(gemini));
  const parts = [];
  if (chat.reasoning) parts.push({ kind: "reasoning", text: chat.reasoning });
  if (chat.text) parts.push({ kind: "text", text: chat.text });
  for (const call of chat.calls.filter(Boolean)) parts.push({ kind: "tool_call", ...call });
  return parts;
}

function parsed(json) {
  try {
    return json ? JSON.parse(json) : null;
  } catch {
    return null;
  }
}

function mergedText(parts) {
  const merged = [];
  for (const part of parts) {
    const last = merged.at(-1);
    if (last && part.text !== undefined && last.text !== undefined && !!part.thought === !!last.thought) last.text += part.text;
    else merged.push({ ...part });
  }
  return merged;
}

/** What `current` adds to `previous` (the request before it in its session): messages added, the system prompt
 * or the tools changed, cache breakpoints moved, or history rewritten. */
export function added(previous, current) {
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  let kept = 0;
  while (kept < previous.messages.length && kept < current.messages.length && same(previous.messages[kept], current.messages[kept])) kept++;
  const before = new Map(previous.tools.map((tool) => [tool.name, tool.definition]));
  const after = new Map(current.tools.map((tool) => [tool.name, tool.definition]));
  return {
    systemChanged: !same(previous.system, current.system),
    rewritten: kept < previous.messages.length ? kept : null, // the first message of the history that changed
    removed: previous.messages.length - kept,
    newMessages: current.messages.slice(kept),
    from: kept,
    toolsAdded: [...after.keys()].filter((name) => !before.has(name)),
    toolsRemoved: [...before.keys()].filter((name) => !after.has(name)),
    toolsChanged: [...after.keys()].filter((name) => before.has(name) && before.get(name) !== after.get(name)),
    cacheBefore: previous.cache,
    cacheAfter: current.cache,
    cacheMoved: !same(previous.cache, current.cache),
  };
}
