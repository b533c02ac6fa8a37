#!/usr/bin/python3
"""A scripted OpenAI-compatible chat-completions server for tests and benchmarks.

Speaks real HTTP/1.1 on 127.0.0.1: POST /v1/chat/completions (or any path
ending in /chat/completions), streaming (SSE, chunked) and non-streaming,
with usage in the final chunk when the client asks for it.

Usage:
  fake_llm.py --script FILE [--port-file FILE] [--log FILE] [--port N]
              [--token-rate TPS]

The script is JSON: {"responses": [RESPONSE, ...]} (or just the list). Each
request consumes the next response; a response with "times": N serves N
requests. When the script is used up the server answers 500 "script
exhausted". A RESPONSE is an object:
  content        reply text (default "")
  token_rate     tokens per second while streaming (default --token-rate, 0 = no delay)
  first_token_ms delay before the first token (default 0)
  times          how many requests this response serves (default 1)
  fault          null or one of:
    "429"           status 429, header Retry-After: <retry_after> (default 1)
    "500" / "502" / "503"   that status with an error object
    "401" / "403" / "404"   that status with an error object
    "stall"         stream stall_after tokens (default 2) then go silent
                    for stall_seconds (default 30); not streaming: answer
                    only after stall_seconds
    "truncate"      stream truncate_after tokens (default 2) then drop the
                    connection without ending the chunked body; not
                    streaming: send half the body, then drop the connection
    "truncate_clean" stream truncate_after tokens then end the body cleanly
                    but without finish_reason or [DONE]
    "malformed"     send broken JSON (in a stream: after truncate_after tokens)
    "stream_error"  stream truncate_after tokens then an error object
    "length" / "content_filter"  the server cuts the reply: only the first
                    truncate_after tokens, then a normal end with that
                    finish_reason (streamed: usage and [DONE] follow)
    "no_finish"     stream truncate_after tokens, then usage and [DONE] but
                    never a finish_reason
    "big"           stream a body of exactly big_bytes bytes: SSE comment
                    lines pad the normal reply (content, finish, usage, [DONE])
  retry_after    the 429 Retry-After header's value, sent as given (default 1)
  match          serve this response to every request whose messages
                 contain this text (for as many requests as come, or
                 "times" of them), before the ordered ones: a reply per task
  cached_tokens  report usage.prompt_tokens_details.cached_tokens (this many,
                 at most the prompt's tokens), as servers with prompt caching do
  choices        the replies to a request with OpenAI's `n` (not streamed):
                 a list whose items are reply texts or objects {"content",
                 "finish_reason" (default "stop"), "index" (default the
                 position), "refusal"}; all are sent, however many `n` asked
                 (fewer than asked, as some servers do). A response without
                 "choices" answers one choice whatever `n` is, like a server
                 that does not support `n` (Ollama)
  reject_n       true: a request with `n` > 1 gets HTTP 400 "n must be 1",
                 like a server that refuses the parameter (the response is
                 not used up)
  replay         a recorded reply (tests/llm/*.json, or a path) played back
                 byte-exact whatever the request asked: its status, headers
                 and body, each of its "chunks" one HTTP chunk (one write) or,
                 with "split": "bytes", every byte its own HTTP chunk

A recording (tests/llm/*.json) is {"source": where the bytes come from,
"status": N, "headers": [[name, value], ...], "chunks": [text, ...],
"expect": what the client must make of it (read by the tests)}. A chunk is
text encoded as UTF-8, or with "encoding": "latin-1" each character one
byte (for bodies with invalid UTF-8). "length": true sends the body with
Content-Length instead of chunked.

Every request is appended to the log as one JSON line:
  {"n": index, "t": unix time, "path": ..., "auth": Authorization header or
   null, "body": the parsed request body}
The chosen port is written to --port-file (atomically), else printed on stdout.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def split_tokens(text):
    """Cuts text into token-sized pieces: runs of at most 4 non-space
    characters, each with the whitespace before it."""
    return re.findall(r"\s*\S{1,4}|\s+", text)


class Script:
    def __init__(self, responses, default_rate):
        self.responses = list(responses)
        self.default_rate = default_rate
        self.lock = threading.Lock()
        self.index = 0
        self.served = 0
        self.requests = 0

    def next(self, body=None):
        with self.lock:
            n = self.requests
            self.requests += 1
            msgs = (body or {}).get("messages") or []
            text = "\n".join(str(m.get("content", "")) for m in msgs if isinstance(m, dict))
            for r in self.responses:
                if "match" in r and r["match"] in text and r.get("times", -1) != 0:
                    if "times" in r:
                        r["times"] -= 1
                    return n, r
            while self.index < len(self.responses) and "match" in self.responses[self.index]:
                self.index += 1
            while self.index < len(self.responses):
                r = self.responses[self.index]
                if self.served < int(r.get("times", 1)):
                    self.served += 1
                    return n, r
                self.index += 1
                self.served = 0
                while self.index < len(self.responses) and "match" in self.responses[self.index]:
                    self.index += 1
            return n, None


def _give_back(self, resp):
    """Serves RESP again to the next request (a refusal did not use it)."""
    with self.lock:
        if "match" in resp:
            if "times" in resp:
                resp["times"] += 1
        else:
            self.served -= 1  # next() served it from the current index


Script.give_back = _give_back


def usage(resp, prompt_tokens, completion_tokens):
    u = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
         "total_tokens": prompt_tokens + completion_tokens}
    if "cached_tokens" in resp:
        u["prompt_tokens_details"] = {"cached_tokens": min(int(resp["cached_tokens"]),
                                                           prompt_tokens)}
    return u


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake_llm/1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, obj, extra=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        n, resp = self.server.script.next(body if isinstance(body, dict) else None)
        self.server.log_request_line(n, self.path, self.headers.get("Authorization"), body)
        if not self.path.endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": "no such endpoint " + self.path}})
            return
        if body is None:
            self.send_json(400, {"error": {"message": "request body is not JSON"}})
            return
        if resp is None:
            self.send_json(500, {"error": {"message": "fake_llm: script exhausted"}})
            return
        if "replay" in resp:
            self.replay(resp)
            return
        asked = body.get("n", 1)
        if resp.get("reject_n") and isinstance(asked, int) and asked > 1:
            self.server.script.give_back(resp)
            self.send_json(400, {"error": {"message": "n must be 1", "type": "invalid_request"}})
            return
        fault = resp.get("fault")
        fault = str(fault) if fault is not None else None
        if fault and fault.isdigit():
            code = int(fault)
            extra = {}
            if code == 429:
                extra["Retry-After"] = str(resp.get("retry_after", 1))
            messages = {401: "invalid API key", 403: "forbidden", 404: "model not found",
                        429: "rate limit reached"}
            msg = messages.get(code, "internal error (injected)")
            self.send_json(code, {"error": {"message": msg, "type": "fake"}}, extra)
            return
        prompt_tokens = sum(len(split_tokens(m.get("content", "")))
                            for m in body.get("messages", []))
        if body.get("stream"):
            self.stream(resp, fault, body, prompt_tokens)
        elif "choices" in resp:
            self.several(resp, prompt_tokens)
        else:
            self.whole(resp, fault, prompt_tokens)

    def replay(self, resp):
        path = resp["replay"]
        if not os.path.isabs(path):
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llm", path)
        with open(path) as f:
            rec = json.load(f)
        body = [c.encode(rec.get("encoding", "utf-8")) for c in rec["chunks"]]
        if resp.get("split") == "bytes":
            body = [bytes([b]) for c in body for b in c]
        self.send_response(int(rec.get("status", 200)))
        for k, v in rec.get("headers", []):
            self.send_header(k, v)
        whole = b"".join(body)
        if rec.get("length"):
            self.send_header("Content-Length", str(len(whole)))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            if rec.get("length"):
                self.wfile.write(whole)
                return
            for c in body:
                if c:
                    self.chunk(c)
            self.chunk(b"")
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client hung up (it may stop reading once it has failed)

    def whole(self, resp, fault, prompt_tokens):
        content = resp.get("content", "")
        delay = resp.get("first_token_ms", 0) / 1000.0
        rate = resp.get("token_rate", self.server.script.default_rate)
        ntok = len(split_tokens(content))
        if rate:
            delay += ntok / float(rate)
        if fault == "stall":
            delay += float(resp.get("stall_seconds", 30))
        if delay:
            time.sleep(delay)
        finish = "stop"
        if fault in ("length", "content_filter"):
            finish = fault
            content = "".join(split_tokens(content)[:int(resp.get("truncate_after", 2))])
        if fault in ("truncate", "truncate_clean"):
            data = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            self.connection.shutdown(2)
            return
        if fault == "malformed":
            data = b'{"id":"x","choices":[{"message":{"content":'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_json(200, {
            "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish}],
            "usage": usage(resp, prompt_tokens, ntok)})

    def several(self, resp, prompt_tokens):
        """A whole reply with several choices (a request with `n`)."""
        choices, ntok = [], 0
        for i, c in enumerate(resp["choices"]):
            if isinstance(c, str):
                c = {"content": c}
            msg = {"role": "assistant", "content": c.get("content")}
            if "refusal" in c:
                msg["refusal"] = c["refusal"]
            ntok += len(split_tokens(c.get("content") or ""))
            choices.append({"index": c.get("index", i), "message": msg,
                            "finish_reason": c.get("finish_reason", "stop")})
        self.send_json(200, {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
                             "choices": choices, "usage": usage(resp, prompt_tokens, ntok)})

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def event(self, obj):
        self.chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

    def delta(self, content=None, finish=None, role=None):
        d = {}
        if role:
            d["role"] = role
        if content is not None:
            d["content"] = content
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake",
                "choices": [{"index": 0, "delta": d, "finish_reason": finish}]}

    def big(self, resp, body, prompt_tokens):
        """A body of exactly big_bytes bytes: comment lines, then the reply."""
        tokens = split_tokens(resp.get("content", ""))
        tail = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in
                        [self.delta(content="", role="assistant")] +
                        [self.delta(content=t) for t in tokens] + [self.delta(finish="stop")])
        tail += b"data: [DONE]\n\n"
        pad = int(resp["big_bytes"]) - len(tail)
        line = b":" + b"x" * 65534 + b"\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while pad >= len(line):
                self.chunk(line * min(pad // len(line), 8))
                pad -= len(line) * min(pad // len(line), 8)
            if pad >= 2:
                self.chunk(b":" + b"x" * (pad - 2) + b"\n")
            elif pad == 1:
                self.chunk(b"\n")  # a blank line: no event
            self.chunk(tail)
            self.chunk(b"")
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # refused: the client hung up

    def stream(self, resp, fault, body, prompt_tokens):
        if fault == "big":
            self.big(resp, body, prompt_tokens)
            return
        tokens = split_tokens(resp.get("content", ""))
        rate = resp.get("token_rate", self.server.script.default_rate)
        gap = 1.0 / rate if rate else 0.0
        cut = int(resp.get("truncate_after", 2))
        stall_at = int(resp.get("stall_after", 2))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.event(self.delta(content="", role="assistant"))
            if resp.get("first_token_ms"):
                time.sleep(resp["first_token_ms"] / 1000.0)
            cutting = ("truncate", "truncate_clean", "malformed", "stream_error", "length",
                       "content_filter", "no_finish")
            for i, tok in enumerate(tokens):
                if fault in cutting and i == cut:
                    break
                if fault == "stall" and i == stall_at:
                    time.sleep(float(resp.get("stall_seconds", 30)))
                if gap:  # each token costs 1/rate, the first one too (as in batch mode)
                    time.sleep(gap)
                self.event(self.delta(content=tok))
            if fault == "truncate":
                self.wfile.flush()
                self.connection.shutdown(2)
                return
            if fault == "truncate_clean":
                self.chunk(b"")
                return
            if fault == "malformed":
                self.chunk(b'data: {"choices":[{"delta":{"content":"oops\n\n')
                self.chunk(b"")
                return
            if fault == "stream_error":
                self.event({"error": {"message": "model overloaded (injected)"}})
                self.chunk(b"")
                return
            if fault != "no_finish":
                self.event(self.delta(finish=fault if fault in cutting else "stop"))
            if (body.get("stream_options") or {}).get("include_usage"):
                self.event({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                            "choices": [],
                            "usage": usage(resp, prompt_tokens, len(tokens))})
            self.chunk(b"data: [DONE]\n\n")
            self.chunk(b"")
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client went away (cancel, idle timeout): nothing to do


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # hundreds of missions may ask at once (bench_serve): the default
    # backlog of 5 would leave most connections to the kernel's SYN retries
    request_queue_size = 1024

    def __init__(self, addr, script, log_path):
        super().__init__(addr, Handler)
        self.script = script
        self.log_path = log_path
        self.log_lock = threading.Lock()

    def log_request_line(self, n, path, auth, body):
        if not self.log_path:
            return
        line = json.dumps({"n": n, "t": time.time(), "path": path, "auth": auth, "body": body})
        with self.log_lock, open(self.log_path, "a") as f:
            f.write(line + "\n")


def main():
    ap = argparse.ArgumentParser(description="scripted OpenAI-compatible server")
    ap.add_argument("--script", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--token-rate", type=float, default=0.0)
    args = ap.parse_args()
    with open(args.script) as f:
        doc = json.load(f)
    responses = doc.get("responses", []) if isinstance(doc, dict) else doc
    srv = Server(("127.0.0.1", args.port), Script(responses, args.token_rate), args.log)
    port = srv.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    else:
        print(port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
