#!/usr/bin/env node
// Counts tokens with real BPE tokenizers (js-tiktoken, offline: the ranks
// ship in the package). Reads a JSON array of strings on stdin and prints
// {"cl100k_base": [counts], "o200k_base": [counts]} on stdout.
"use strict";
const { Tiktoken } = require("js-tiktoken/lite");
const ENCODINGS = {
  cl100k_base: require("js-tiktoken/ranks/cl100k_base"),
  o200k_base: require("js-tiktoken/ranks/o200k_base"),
};

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const texts = JSON.parse(input);
  if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string")) {
    process.stderr.write("count_tokens: expected a JSON array of strings\n");
    process.exit(1);
  }
  const out = {};
  for (const [name, ranks] of Object.entries(ENCODINGS)) {
    const enc = new Tiktoken(ranks.default || ranks);
    // Special-token text in a plan is plain text, as a server counts it.
    out[name] = texts.map((t) => enc.encode(t, [], []).length);
  }
  process.stdout.write(JSON.stringify(out) + "\n");
});
