// Drive a running `llmproxy mock` from JavaScript: add an expectation over REST with fetch, call the mock with
// the official OpenAI SDK, then verify over REST how many requests matched.
// Run it under the mock: llmproxy mock -- node --test expectations.test.mjs
import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";

// LLMPROXY_CONTROL_URL is the chaos endpoint; the REST API is on the same origin.
const api = new URL("/llmproxy/api/v1", process.env.LLMPROXY_CONTROL_URL).href;
const testId = "capital-of-france"; // keeps this test's expectations and requests apart from other tests'

async function control(method, path, body) {
  const response = await fetch(api + path, {
    method,
    headers: { authorization: `Bearer ${process.env.LLMPROXY_CONTROL_TOKEN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${answer.error}`);
  return answer;
}

test("an expectation added over REST answers the SDK, and the journal counts it", async () => {
  const expectation = { match: { latestMessageContains: "capital" }, respond: { text: "Paris." } };
  const { added } = await control("POST", `/expectations?testId=${testId}`, { expectations: [expectation] });
  assert.equal(added.length, 1);

  const client = new OpenAI({
    apiKey: "sk-any", // the mock never checks it
    baseURL: `${process.env.LLMPROXY_BASE_URL}/v1`, // the mock answers every provider on its base URL
    defaultHeaders: { "x-llmproxy-test-id": testId },
  });
  const completion = await client.chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "What is the capital of France?" }],
  });
  assert.equal(completion.choices[0].message.content, "Paris.");

  const once = { match: { latestMessageContains: "capital" }, exactly: 1, testId };
  assert.equal((await control("POST", "/verify/requests", once)).ok, true);

  const twice = await control("POST", "/verify/requests", { ...once, exactly: 2 });
  assert.equal(twice.ok, false); // a failed verify is an answer: what was found instead
  assert.equal(twice.count, 1);
});
