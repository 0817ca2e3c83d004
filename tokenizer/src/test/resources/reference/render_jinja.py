#!/usr/bin/python3
"""The second reference for kvprefix's chat templates: Python's own Jinja2 (Debian's python3-jinja2),
set up the way HuggingFace transformers sets it up for apply_chat_template (docs/TOKENIZER.md
section 5.2): an ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the loopcontrols
extension, a {% generation %} block that renders its body, and the globals and filter transformers
adds: raise_exception, strftime_now and tojson (json.dumps with ensure_ascii=False by default).

Reads one JSON object per line from the file named by argv[1]: {"template": ..., "context": {...}},
and prints one JSON line per input line: {"text": rendered} or {"error": message}. Written for
kvprefix from the documented behaviour; it shares no code with the Java side it checks.
"""
import json
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Generation(Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    env = environment()
    compiled = {}
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            item = json.loads(line)
            try:
                t = compiled.get(item["template"])
                if t is None:
                    t = compiled[item["template"]] = env.from_string(item["template"])
                out = {"text": t.render(**item["context"])}
            except Exception as e:  # the Java side compares the fact of an error, not its wording
                out = {"error": type(e).__name__ + ": " + str(e)}
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
