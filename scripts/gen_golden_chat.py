#!/usr/bin/env python3
"""Golden chat-template renders for tests/unit/chat/.

The oracle is jinja2 configured the way Hugging Face's apply_chat_template configures it
(transformers/utils/chat_template_utils.py, _compile_jinja_template):
  ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                extensions=[AssistantTracker, jinja2.ext.loopcontrols])
  filters["tojson"] = json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
                                 sort_keys=sort_keys)   (HF's override of Jinja's tojson)
  globals["raise_exception"] raises TemplateError(message); globals["strftime_now"] formats now()
strftime_now here reads a fixed clock (NOW) so the renders are reproducible; the C++ test fixes
wisp's clock to the same instant.

Writes tests/golden/chat/renders.json:
  templates: name -> {file, model}: the published templates under tests/golden/chat/templates/
             (format specifications; smollm2-135m-instruct.jinja is refreshed from the GGUF)
  cases:     one per (template, conversation, add_generation_prompt) and per extra scenario
             (tools, tool calls, content parts, reasoning): {name, template | source, context,
             expected | error}. context holds every template variable (messages,
             add_generation_prompt, bos_token, eos_token, tools, ...). error is
             {kind: "raised" | "runtime", message}: "raised" when the template called
             raise_exception (message is exactly its argument), "runtime" for jinja's own errors.
  features:  small templates that pin down one piece of Jinja semantics each, rendered the same way
  syntax_errors: malformed templates with the line jinja2 reports

Usage:  python3 scripts/gen_golden_chat.py [--models-dir models]
Needs:  jinja2 (3.1), gguf (only to refresh the SmolLM2 template).
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "tests" / "golden" / "chat"
TEMPLATE_DIR = OUT_DIR / "templates"
NOW = datetime.datetime(2025, 3, 7, 9, 5, 3)  # a Friday; single-digit day and hour test padding

# name -> (file, the model it is published with, bos_token, eos_token)
TEMPLATES = {
    "smollm2": ("smollm2-135m-instruct.jinja", "HuggingFaceTB/SmolLM2-135M-Instruct (from the GGUF in models/)",
                "<|im_start|>", "<|im_end|>"),
    "chatml": ("chatml.jinja", "teknium/OpenHermes-2.5-Mistral-7B", "<s>", "<|im_end|>"),
    "qwen2.5": ("qwen2.5-instruct.jinja", "Qwen/Qwen2.5-7B-Instruct", "", "<|im_end|>"),
    "qwen3": ("qwen3.jinja", "Qwen/Qwen3-0.6B", "", "<|im_end|>"),
    "llama2": ("llama2-chat.jinja", "meta-llama/Llama-2-7b-chat-hf", "<s>", "</s>"),
    "llama3": ("llama3-instruct.jinja", "meta-llama/Meta-Llama-3-8B-Instruct", "<|begin_of_text|>", "<|eot_id|>"),
    "llama3.1": ("llama3.1-instruct.jinja", "meta-llama/Llama-3.1-8B-Instruct", "<|begin_of_text|>", "<|eot_id|>"),
    "llama3.2": ("llama3.2-instruct.jinja", "meta-llama/Llama-3.2-3B-Instruct", "<|begin_of_text|>", "<|eot_id|>"),
    "gemma2": ("gemma2-it.jinja", "google/gemma-2-2b-it", "<bos>", "<eos>"),
    "gemma3": ("gemma3-it.jinja", "google/gemma-3-*-it", "<bos>", "<eos>"),
    "mistral": ("mistral-instruct-v0.1.jinja", "mistralai/Mistral-7B-Instruct-v0.1", "<s>", "</s>"),
    "mistral-nemo": ("mistral-nemo-instruct-2407.jinja", "mistralai/Mistral-Nemo-Instruct-2407", "<s>", "</s>"),
    "mistral-small-3.1": ("mistral-small-3.1-instruct-2503.jinja", "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
                          "<s>", "</s>"),
    "glm-4.6": ("glm-4.6.jinja", "zai-org/GLM-4.6", "", "<|endoftext|>"),
    "zephyr": ("zephyr-tinyllama-chat.jinja", "TinyLlama/TinyLlama-1.1B-Chat-v1.0", "<s>", "</s>"),
    "phi3.5": ("phi3.5-mini-instruct.jinja", "microsoft/Phi-3.5-mini-instruct", "<s>", "<|endoftext|>"),
    "gpt-oss": ("gpt-oss.jinja", "openai/gpt-oss-120b (harmony; llama.cpp's models/templates/openai-gpt-oss-120b.jinja)",
                "<|startoftext|>", "<|return|>"),
    "hermes2-pro": ("hermes2-pro-tool-use.jinja", "NousResearch/Hermes-2-Pro-Llama-3-8B (tool_use)",
                    "<|begin_of_text|>", "<|im_end|>"),
}


class RaisedByTemplate(jinja2.exceptions.TemplateError):
    """What raise_exception throws (HF throws TemplateError; the subclass tells it apart here)."""


class GenerationBlock(jinja2.ext.Extension):
    """HF's {% generation %}...{% endgeneration %}: renders its body in place (HF also records
    where assistant text lies, which does not change the output)."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def hf_environment() -> ImmutableSandboxedEnvironment:
    def raise_exception(message):
        raise RaisedByTemplate(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return env


ENV = hf_environment()


def render(source: str, context: dict) -> dict:
    try:
        return {"expected": ENV.from_string(source).render(**context)}
    except RaisedByTemplate as e:
        return {"error": {"kind": "raised", "message": str(e)}}
    except jinja2.exceptions.TemplateSyntaxError:
        raise
    except Exception as e:  # jinja's UndefinedError, TypeError, ... : any runtime failure
        return {"error": {"kind": "runtime", "message": f"{type(e).__name__}: {e}"}}


def msg(role, content, **extra):
    return {"role": role, "content": content, **extra}


SYSTEM = "You are a helpful assistant."
CONVERSATIONS = {
    "one_turn": [msg("user", "Hello!")],
    "system_one_turn": [msg("system", SYSTEM), msg("user", "What is 2 + 2?")],
    "two_turns": [msg("user", "Hi."), msg("assistant", "Hello! How can I help?"), msg("user", "Name a color.")],
    "system_two_turns": [msg("system", SYSTEM), msg("user", "Hi."), msg("assistant", "Hello!"),
                         msg("user", "Tell me a joke.")],
    "three_turns_open": [msg("user", "One"), msg("assistant", "1"), msg("user", "Two"), msg("assistant", "2"),
                         msg("user", "Three"), msg("assistant", "3")],
    "system_four_turns": [msg("system", "Answer in one word."), msg("user", "Sky color?"), msg("assistant", "Blue"),
                          msg("user", "Grass?"), msg("assistant", "Green"), msg("user", "Snow?"),
                          msg("assistant", "White"), msg("user", "Night?")],
    "unicode": [msg("system", "Réponds en français 🇫🇷"), msg("user", "héllo wörld — 你好，世界 🌍 שלום"),
                msg("assistant", "Ça va ? ✓ Ω≈ç√"), msg("user", "naïve café\u0301 e\u0301\u0301 ﷽ 𝔘𝔫𝔦")],
    "empty_content": [msg("system", ""), msg("user", ""), msg("assistant", ""), msg("user", "")],
    "jinja_text": [msg("user", "{{ x }} {% if true %}yes{% endif %} {# c #} {{- raw -}}"),
                   msg("assistant", "{% raw %}{{ not rendered }}{% endraw %} {%- set a = 1 %}"),
                   msg("user", "'single' \"double\" \\backslash \\n not-a-newline")],
    "whitespace": [msg("system", "  padded system  \n"), msg("user", "  padded  \n\n"),
                   msg("assistant", "\n\tindented\t\n"), msg("user", "line1\r\nline2\n\n\nline5  ")],
    "special_text": [msg("user", "<|im_start|>user <s>[INST] <start_of_turn> <|eot_id|> </s>"),
                     msg("assistant", "[/INST] <end_of_turn> <|im_end|>"), msg("user", "ok")],
}

# Templates whose conversations are user/assistant only (they raise on a system message); they
# still get the system conversations, which then golden the error.
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather in a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city, e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
            "days": {"type": "integer", "description": "Forecast days"},
            "hourly": {"type": "array", "items": {"type": "number"}, "description": "Hourly values"},
            "extra": {"type": ["string", "integer"], "description": "Anything else (é, 世界)"},
            "meta": {"type": "object", "additionalProperties": {"type": "boolean"}, "description": "Flags"}},
            "required": ["city"]},
        "return": {"type": "number", "description": "The temperature."}}},
    {"type": "function", "function": {
        "name": "search", "description": "Search the web.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "limit": {"type": "number", "description": "At most this many, e.g. 2.5"}},
            "required": ["query"]}}},
]

TOOL_CONVERSATION = [
    msg("system", SYSTEM),
    msg("user", "What's the weather in Paris and Tokyo?"),
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call00001", "type": "function",
         "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2, "hourly": [1.5, 2.0]}}},
        {"id": "call00002", "type": "function",
         "function": {"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}}}]},
    {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": "{\"temp\": 21.5}"},
    {"role": "tool", "tool_call_id": "call00002", "name": "get_weather", "content": "18"},
    msg("assistant", "Paris: 21.5 °C, Tokyo: 18 °C."),
    msg("user", "Thanks! Now search for 'jinja'."),
]

ONE_CALL_CONVERSATION = [
    msg("system", SYSTEM),
    msg("user", "Weather in Oslo?"),
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call00003", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
    {"role": "tool", "tool_call_id": "call00003", "content": "-3"},
    msg("assistant", "It is -3 °C in Oslo."),
    msg("user", "And tomorrow?"),
]


def base_context(name, messages, add_generation_prompt, **extra):
    _, _, bos, eos = TEMPLATES[name]
    return {"messages": messages, "add_generation_prompt": add_generation_prompt, "bos_token": bos,
            "eos_token": eos, **extra}


def scenario_cases():
    """Beyond plain conversations: tools, tool calls, content parts, reasoning, clocks, errors."""
    s = []

    def add(name, template, messages, agp=True, **extra):
        s.append((name, template, base_context(template, messages, agp, **extra)))

    add("tools", "qwen2.5", TOOL_CONVERSATION, tools=TOOLS)
    add("tools_default_system", "qwen2.5", TOOL_CONVERSATION[1:], tools=TOOLS)
    add("tool_calls_no_tools", "qwen2.5", TOOL_CONVERSATION)
    add("tools", "qwen3", TOOL_CONVERSATION, tools=TOOLS)
    add("reasoning", "qwen3", [msg("user", "2+2?"), msg("assistant", "<think>\nadd them\n</think>\n\n4"),
                               msg("user", "3+3?"), msg("assistant", "<think>\nagain\n</think>\n\n6")], False)
    add("reasoning_field", "qwen3", [msg("user", "2+2?"),
                                     msg("assistant", "4", reasoning_content="two and two")], False)
    add("no_thinking", "qwen3", [msg("user", "Hi")], enable_thinking=False)
    add("tools_in_user_message", "llama3.1", ONE_CALL_CONVERSATION, tools=TOOLS)
    add("tools_in_system", "llama3.1", ONE_CALL_CONVERSATION, tools=TOOLS, tools_in_user_message=False)
    add("date_string", "llama3.1", [msg("user", "Date?")], date_string="01 Jan 2030")
    add("builtin_tools", "llama3.1",
        [msg("user", "Look it up"), {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "brave_search", "arguments": {"query": "wisp"}}}]},
         {"role": "ipython", "content": {"results": ["a", "b"]}}],
        builtin_tools=["brave_search", "code_interpreter", "wolfram_alpha"])
    add("two_tool_calls", "llama3.1", TOOL_CONVERSATION, tools=TOOLS)
    add("no_user_message", "llama3.1", [msg("system", SYSTEM)], tools=TOOLS)
    add("strftime_now", "llama3.2", [msg("user", "What day is it?")])
    add("tools_in_system", "llama3.2", ONE_CALL_CONVERSATION, tools=TOOLS, tools_in_user_message=False)
    add("tools", "mistral-nemo", TOOL_CONVERSATION, tools=TOOLS)
    add("bad_tool_call_id", "mistral-nemo",
        [msg("user", "x"), {"role": "assistant", "tool_calls": [
            {"id": "short", "function": {"name": "search", "arguments": {"query": "q"}}}]}])
    add("tools", "hermes2-pro", TOOL_CONVERSATION, tools=TOOLS)
    add("tools", "mistral-small-3.1", [m for m in TOOL_CONVERSATION if m["role"] != "system"], tools=TOOLS)
    add("content_parts", "mistral-small-3.1", [
        {"role": "system", "content": [{"type": "text", "text": "Look closely."}]},
        {"role": "user", "content": [{"type": "image_url"}, {"type": "text", "text": "What is it?"}]}])
    add("tools", "glm-4.6", TOOL_CONVERSATION, tools=TOOLS)
    add("reasoning", "glm-4.6", [msg("user", "2+2?"), msg("assistant", "<think>\nsum\n</think>\n4"),
                                 msg("user", "3+3?")], enable_thinking=False)
    add("content_parts", "gemma3", [
        {"role": "system", "content": [{"type": "text", "text": "Describe images.  "}]},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "  What is this?  "}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]},
        {"role": "user", "content": "And this?"}])
    add("invalid_content", "gemma3", [msg("user", None)])
    add("bad_alternation", "gemma3", [msg("user", "a"), msg("user", "b")])
    add("bad_alternation", "gemma2", [msg("assistant", "a")])
    add("bad_alternation", "llama2", [msg("system", SYSTEM), msg("assistant", "a"), msg("user", "b")])
    add("bad_alternation", "mistral", [msg("user", "a"), msg("assistant", "b"), msg("assistant", "c")])
    add("system_role", "mistral", [msg("user", "a"), msg("system", "b")])
    add("bad_alternation", "mistral-nemo", [msg("system", SYSTEM), msg("assistant", "a")])
    add("tool_role", "mistral-nemo", [msg("user", "a"), msg("assistant", "b"), msg("developer", "c")])
    # gpt-oss (harmony): the system block with the clock and reasoning effort, tools as a TypeScript
    # namespace, one tool call per assistant message, analysis ("thinking") kept only where it must be.
    one_call_thinking = [dict(m) for m in ONE_CALL_CONVERSATION]
    one_call_thinking[2]["thinking"] = "I should look the weather up."
    add("tools", "gpt-oss", ONE_CALL_CONVERSATION, tools=TOOLS)
    add("tool_call_thinking", "gpt-oss", one_call_thinking[:4], tools=TOOLS)
    add("tool_call_thinking_answered", "gpt-oss", one_call_thinking, tools=TOOLS)
    add("reasoning_effort", "gpt-oss", [msg("system", SYSTEM), msg("user", "Hi")], reasoning_effort="high",
        model_identity="You are wisp's test model.")
    add("builtin_tools", "gpt-oss", [msg("user", "Look it up")], builtin_tools=["browser", "python"])
    add("thinking_last_turn", "gpt-oss", [msg("user", "2+2?"), msg("assistant", "4", thinking="two and two")], False)
    add("channel_in_content", "gpt-oss", [msg("user", "x"), msg("assistant", "<|channel|>final<|message|>y")])
    add("tool_without_call", "gpt-oss", [msg("user", "x"), {"role": "tool", "content": "1"}])
    add("no_messages", "smollm2", [])
    add("no_messages", "gemma3", [])
    add("none_content", "chatml", [msg("user", None)])
    return s


def conversation_cases():
    cases = []
    for tname, (fname, _, _, _) in TEMPLATES.items():
        source = (TEMPLATE_DIR / fname).read_text(encoding="utf-8")
        for cname, messages in CONVERSATIONS.items():
            for agp in (True, False):
                context = base_context(tname, messages, agp)
                case = {"name": f"{tname}/{cname}/{'gen' if agp else 'nogen'}", "template": tname,
                        "context": context}
                case.update(render(source, context))
                cases.append(case)
        for sname, template, context in (x for x in scenario_cases() if x[1] == tname):
            case = {"name": f"{tname}/{sname}", "template": template, "context": context}
            case.update(render(source, context))
            cases.append(case)
    return cases


# One template per piece of Jinja semantics wisp must reproduce; each renders with FEATURE_CONTEXT.
FEATURE_CONTEXT = {
    "s": "Hello, World", "n": 7, "f": 2.5, "neg": -3, "t": True, "none": None, "empty": "",
    "items": [3, 1, 2], "words": ["b", "A", "c"], "d": {"b": 1, "a": 2, "items": "shadowed"},
    "people": [{"name": "Ann", "age": 31}, {"name": "bob", "age": 25}, {"name": "Cid", "age": 31}],
    "nested": {"x": {"y": [10, 20, {"z": "deep"}]}}, "uni": "héllo wörld 你好 🌍",
    "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
}
FEATURES = [
    # whitespace control, trim_blocks, lstrip_blocks
    "a\n{% if t %}\nyes\n{% endif %}\nb",
    "  {% if t %}\n    x\n  {% endif %}\n  {{ s }}  \n",
    "a  {%- if t -%}  b  {%- endif %}  c",
    "a\n  {%+ if t %}b{% endif +%}\nc",
    "{# comment #}\n  {# indented comment #}\nx\n{#- stripped -#}\n  y",
    "line\n    {{ s }}\n    {% set q = 1 %}\n    {{ q }}",
    "{% for i in items %}\n  - {{ i }}\n{% endfor %}\ndone",
    "{%- for i in items -%}\n{{ i }},\n{%- endfor %}",
    "{% raw %}{{ not }} {% tags %}{% endraw %}|{%- raw -%}  x  {%- endraw -%}|",
    "trailing newline kept once\n\n",
    "crlf\r\nline\r\n{% if t %}\r\nx\r\n{% endif %}\r\n",
    "{{ {'a': {'b': 1}} }}{{ {'k': [1, {'z': 2}]}['k'][1]['z'] }}",
    # literals and printing
    "{{ 1 }} {{ -1 }} {{ 1.0 }} {{ 1.5e3 }} {{ 1e16 }} {{ 1e-5 }} {{ 0.1 + 0.2 }} {{ 1_000 }} {{ 0x1F }}",
    "{{ none }} {{ true }} {{ false }} {{ True }} {{ None }} {{ [1, 'a', none, true, 2.5] }} {{ ('a',) }}",
    "{{ {'a': 1, 'b': 'x'} }} {{ [] }} {{ {} }} {{ 'it\\'s' }} {{ \"say \\\"hi\\\"\" }}",
    "{{ ['it\\'s', 'a\"b', 'both\\'\"', 'nl\\n', 'tab\\t', 'uni é', '\\x01'] }}",
    "{{ 'a' 'b' \"c\" }} {{ '\\u00e9\\x41\\101\\q\\d' }} {{ 'back\\\\slash' }}",
    "{{ undefined_name }}|{{ undefined_name|length }}|{{ d.missing }}|{{ items[10] }}|{{ none.x }}",
    # arithmetic
    "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7 / 2 }} {{ 6 / 3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}",
    "{{ 7.5 // 2 }} {{ -7.5 // 2 }} {{ 7.5 % 2 }} {{ -7.5 % 2 }} {{ 0.1 * 3 }} {{ 1 / 3 }} {{ 2 ** 0.5 }} {{ 1e300 * 1e10 }}",
    "{{ n + f }} {{ n - neg }} {{ n * f }} {{ true + 1 }} {{ -f }} {{ +n }} {{ -(n) }}",
    "{{ 'ab' * 3 }} {{ 2 * 'x' }} {{ [1] * 2 }} {{ [1] + [2, 3] }} {{ 'a' + 'b' }} {{ 1 ~ 2 ~ none ~ undefined_name }}",
    "{{ 123456789 * 1000 }} {{ 10 ** 15 }} {{ 1e22 }} {{ 12345678901234567.0 }} {{ 0.000123 }} {{ 1.5e-7 }}",
    # comparison and logic
    "{{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' < 'b' }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ [1, 2] < [1, 3] }} {{ 'B' < 'a' }}",
    "{{ 'a' in 'cat' }} {{ 'k' in {'k': 1} }} {{ 2 not in [1] }} {{ 'x' in undefined_name }} {{ 1 in [1.0] }}",
    "{{ t and 'yes' }} {{ empty or 'fallback' }} {{ none or 0 }} {{ not t }} {{ not empty }} {{ n and none }}",
    "{{ 'a' if t }}|{{ 'a' if not t }}|{{ 'a' if none else 'b' }}|{{ 1 if false else 2 if false else 3 }}",
    "{{ messages[0] == {'role': 'user', 'content': 'hi'} }} {{ [1, [2]] == [1, [2]] }} {{ none == none }} {{ undefined_name == none }}",
    # subscripts, slices, attributes
    "{{ s[0] }} {{ s[-1] }} {{ s[1:5] }} {{ s[::-1] }} {{ s[::2] }} {{ s[-5:] }} {{ s[:-7] }} {{ s[100:] }}|",
    "{{ uni[1] }} {{ uni[::-1] }} {{ uni[6:11] }} {{ uni|length }} {{ uni[-1] }}",
    "{{ items[1:] }} {{ items[::-1] }} {{ items[-2:] }} {{ items[5:9] }} {{ items[::-2] }} {{ items[0:3:2] }}",
    "{{ nested.x.y[2].z }} {{ nested['x']['y'][0] }} {{ people[1].name }} {{ d.b }} {{ d['items'] }} {{ items.1 }}",
    # filters
    "{{ s|upper }} {{ s|lower }} {{ 'hello world'|title }} {{ 'hELLO'|capitalize }} {{ uni|upper }} {{ 'ÉÀ'|lower }}",
    "[{{ '  x y  '|trim }}] [{{ 'xxhixx'|trim('x') }}] [{{ '\\t\\n a \\u3000'|trim }}] [{{ none|trim }}]",
    "{{ items|length }} {{ d|length }} {{ s|length }} {{ items|count }} {{ empty|length }}",
    "{{ items|first }} {{ items|last }} {{ s|first }} {{ d|first }} {{ []|first }}|",
    "{{ items|join }} {{ items|join(', ') }} {{ people|join('/', attribute='name') }} {{ words|join('-') }}",
    "{{ s|replace('l', 'L') }} {{ s|replace('l', 'L', 2) }} {{ 'aaa'|replace('', '-') }}",
    "{{ none|default('d') }} {{ undefined_name|default('d') }} {{ empty|default('d') }} {{ empty|default('d', true) }} {{ 0|d(5, boolean=true) }}",
    "{{ items|sort }} {{ words|sort }} {{ words|sort(case_sensitive=true) }} {{ items|sort(reverse=true) }}",
    "{{ people|sort(attribute='age')|map(attribute='name')|join(',') }} {{ people|map(attribute='age')|list }}",
    "{{ d|items|list }} {{ d|dictsort }} {{ {'x': 3, 'Y': 1, 'z': 2}|dictsort(by='value', reverse=true) }} {{ {'b': 1, 'A': 2}|dictsort }} {{ d|list }}",
    "{{ items|reverse|list }} {{ s|reverse }} {{ [1, 1, 2, 'a', 'A']|unique|list }} {{ words|map('upper')|list }}",
    "{{ items|sum }} {{ items|min }} {{ items|max }} {{ people|sum(attribute='age') }} {{ words|min }} {{ words|max }}",
    "{{ people|selectattr('age', 'equalto', 31)|map(attribute='name')|list }} {{ people|rejectattr('age', 'gt', 30)|list }}",
    "{{ items|select('odd')|list }} {{ items|reject('odd')|list }} {{ [0, 1, '', 'a', none]|select|list }}",
    "{{ 3.7|int }} {{ '12'|int }} {{ ' 42 '|int }} {{ 'x'|int }} {{ '1.9'|int }} {{ '0x1A'|int(0, 16) }} {{ '2.5'|float }} {{ 'x'|float }} {{ 3|float }}",
    "{{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 3.14159|round(3) }} {{ 7|round }} {{ 2.5|round(0, 'floor') }} {{ 2.1|round(0, 'ceil') }}",
    "{{ -3|abs }} {{ neg|abs }} {{ -2.5|abs }} {{ n|string ~ '!' }} {{ items|string }} {{ none|string }}",
    "{{ 'a\\nb\\n\\nc'|indent }}|{{ 'a\\nb'|indent(2, true) }}|{{ 'a\\n\\nb'|indent(2, blank=true) }}|{{ 'x'|indent('> ', true) }}",
    "{{ '<a href=\"x\">&\\'</a>'|e }} {{ 'one two  three'|wordcount }} {{ s|safe }}",
    "{{ d|tojson }} {{ people|tojson }} {{ nested|tojson(indent=2) }} {{ uni|tojson }} {{ [1.0, 1e16, none, true]|tojson }}",
    "{{ {'a': [], 'b': {}}|tojson(indent=4) }} {{ d|tojson(sort_keys=true) }} {{ d|tojson(separators=(',', ':')) }} {{ '\\u0001\\t\"\\\\'|tojson }}",
    "{{ uni|tojson(ensure_ascii=true) }} {{ 'x'|tojson(indent='\\t') }} {{ {'k': [1, 2]}|tojson(indent='ab') }}",
    # tests
    "{{ n is defined }} {{ undefined_name is defined }} {{ undefined_name is undefined }} {{ none is none }} {{ n is none }}",
    "{{ s is string }} {{ n is string }} {{ n is number }} {{ f is number }} {{ t is number }} {{ n is integer }} {{ t is integer }} {{ f is float }}",
    "{{ d is mapping }} {{ items is mapping }} {{ s is iterable }} {{ d is iterable }} {{ n is iterable }} {{ undefined_name is iterable }} {{ items is sequence }}",
    "{{ t is boolean }} {{ t is true }} {{ 1 is true }} {{ false is false }} {{ range is callable }} {{ s is callable }}",
    "{{ n is odd }} {{ n is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ n is eq 7 }} {{ n is equalto(8) }} {{ n is ne 8 }}",
    "{{ n is lt 8 }} {{ n is gt 8 }} {{ n is ge 7 }} {{ n is le 6 }} {{ 2 is in items }} {{ 'x' is lower }} {{ 'X' is upper }} {{ none is sameas none }}",
    "{{ s is not string }} {{ undefined_name is not defined }} {{ not n is none }} {{ n is not none and n > 3 }}",
    # methods
    "[{{ '  a b  '.strip() }}] [{{ 'xxaxx'.strip('x') }}] [{{ '  a '.lstrip() }}] [{{ ' a  '.rstrip() }}] [{{ '\\n\\na\\n'.strip('\\n') }}]",
    "{{ 'a,b,,c'.split(',') }} {{ ' a  b \\n c '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ 'a b c'.split(none, 1) }}",
    "{{ s.startswith('Hell') }} {{ s.endswith('World') }} {{ s.startswith(('x', 'H')) }} {{ s.upper() }} {{ s.lower() }} {{ s.title() }}",
    "{{ s.replace('o', '0') }} {{ s.find('o') }} {{ s.rfind('o') }} {{ s.find('z') }} {{ uni.find('你') }} {{ s.count('l') }} {{ ', '.join(words) }}",
    "{{ d.get('a') }} {{ d.get('zz') }} {{ d.get('zz', 'dflt') }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.items()|list }}",
    "{{ '123'.isdigit() }} {{ 'a1'.isdigit() }} {{ 'abc'.isalpha() }} {{ ' \\t'.isspace() }} {{ 'a\\nb\\r\\nc'.splitlines() }} {{ 'hello'.capitalize() }}",
    # statements
    "{% if n > 10 %}big{% elif n > 5 %}mid{% else %}small{% endif %}",
    "{% for i in items %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}",
    "{% for i in items %}{{ loop.previtem|default('-') }}>{{ i }}>{{ loop.nextitem|default('-') }} {{ loop.cycle('odd', 'even') }};{% endfor %}",
    "{% for i in items if i != 1 %}{{ i }}:{{ loop.index }}/{{ loop.length }} {% else %}none{% endfor %}",
    "{% for i in [] %}x{% else %}empty{% endfor %} {% for k in d %}{{ k }}{% endfor %} {% for c in 'héy' %}[{{ c }}]{% endfor %}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %} {% for (a, b) in [(5, 6)] %}{{ a * b }}{% endfor %}",
    "{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}",
    "{% for x in [1, 2] %}{% for y in 'ab' %}{{ x }}{{ y }}{{ loop.index }}{% endfor %}{{ loop.index }} {% endfor %}",
    "{{ range(3)|list }} {{ range(1, 10, 3)|list }} {{ range(5, 0, -2)|list }} {{ range(0)|list }}",
    "{% set x = 1 %}{% for i in range(2) %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}",
    "{% for i in range(3) %}{% if i == 0 %}{% set y = 'a' %}{% endif %}[{{ y }}]{% endfor %}[{{ y }}]",
    "{% if t %}{% set z = 'set in if' %}{% endif %}{{ z }}",
    "{% set a, b = 1, 2 %}{{ a }}{{ b }} {% set c = (3, 4) %}{{ c }} {% set l = [a, b] + [c] %}{{ l }}",
    "{% set ns = namespace(count=0, found=false) %}{% for i in items %}{% set ns.count = ns.count + i %}{% if i == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.count }} {{ ns.found }}",
    "{% set ns = namespace() %}{% set ns.x = 'late' %}{{ ns.x }} {{ namespace(a=1, b='two').b }} {{ dict(k=1, j=2) }}",
    "{% set block %}A{{ n }}B{% if t %}C{% endif %}{% endset %}[{{ block }}] {{ block|length }}",
    "{% macro greet(name, greeting='Hi') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', 'Yo') }} {{ greet(greeting='Hey', name='Cid') }} [{{ greet() }}]",
    "{% macro fact(k) %}{% if k <= 1 %}1{% else %}{{ k * fact(k - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}",
    "{% macro show() %}{{ late }}{% endmacro %}{% set late = 'seen' %}{{ show() }} {% for m in [1] %}{% macro inner() %}{{ m }}{% endmacro %}{{ inner() }}{% endfor %}",
    "{% macro wrap(x) -%}\n  [{{ x }}]\n{%- endmacro %}\n{{- wrap(1) }}\n{{ wrap(2) }}",
    "{%- generation -%}in generation {{ n }}{%- endgeneration %}|",
    "{{ raise_exception('custom failure: ' ~ n) if n > 100 else 'no raise' }}",
    "{{ strftime_now('%Y-%m-%d %H:%M:%S %a %b %d %j') }} {{ strftime_now('%d %B %Y') }}",
    "{% for m in messages %}{{ m.role }}:{{ m['content'] }}{{ '\\n' if not loop.last }}{% endfor %}",
    "{{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ messages|map(attribute='role')|join('+') }} {{ (messages|last).content }}",
    "{{ messages[-1]['role'] }} {{ messages[0].content.upper() }} {{ (messages|first)['content'][::-1] }}",
    "{{ -1|abs }} {{ -items|length if false else 'x' }} {{ (1 + 2) * 3 }} {{ 2 + 3 * 4 ** 2 / 8 }} {{ 'a' ~ (1 + 2) }} {{ 'a' ~ 3 * 2 }}",
]

RUNTIME_ERRORS = [
    "{{ 'a' ~ 1 + 2 }}",
    "{{ undefined_name + 'x' }}",
    "{{ undefined_name.attr }}",
    "{{ d.missing.deeper }}",
    "{{ 'a' + 1 }}",
    "{{ 1 / 0 }}",
    "{{ none|length }}",
    "{% for x in none %}{% endfor %}",
    "{% set x = 1 %}{% set x.y = 2 %}",
    "{{ undefined_func() }}",
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}",
    "line one\n  {% if t %}\n    {{ raise_exception('raised on line 3') }}\n  {% endif %}",
    "{{ items|tojson if false else undefined_name|tojson }}",
]

SYNTAX_ERRORS = [
    "{{ }}",
    "line1\n{{ 1 + }}",
    "{% if t %}\nno end",
    "{% for %}",
    "{% endif %}",
    "{% foo %}",
    "a\nb\n{% if t %}{% endfor %}",
    "{{ 'unterminated }}",
    "{{ (1 }}",
    "{{ [1, 2 }}",
    "{# never closed",
    "{{ x | nosuchfilter }}",
    "{{ x is nosuchtest }}",
    "text\n\n   {% set %}",
    "{% break %}",
    "{{ x.}}",
    "{{ 1 }}\n{% for x in y %}\n{{ x }",
]


def feature_cases():
    out = []
    for i, source in enumerate(FEATURES):
        case = {"name": f"feature/{i:03d}", "source": source, "context": FEATURE_CONTEXT}
        case.update(render(source, FEATURE_CONTEXT))
        if "error" in case:
            sys.exit(f"feature template {i} failed in jinja2: {case['error']}\n{source}")
        out.append(case)
    for i, source in enumerate(RUNTIME_ERRORS):
        case = {"name": f"runtime_error/{i:02d}", "source": source, "context": FEATURE_CONTEXT}
        case.update(render(source, FEATURE_CONTEXT))
        if "error" not in case:
            sys.exit(f"runtime error template {i} rendered without error:\n{source}")
        out.append(case)
    return out


def syntax_error_cases():
    out = []
    for source in SYNTAX_ERRORS:
        try:
            ENV.from_string(source)
        except jinja2.exceptions.TemplateSyntaxError as e:
            out.append({"source": source, "line": e.lineno, "message": e.message})
            continue
        except SyntaxError as e:  # jinja compiles `break` outside a loop into invalid Python
            out.append({"source": source, "line": None, "message": f"(python) {e.msg}"})
            continue
        sys.exit(f"expected a syntax error from: {source!r}")
    return out


def refresh_smollm2(models_dir: Path):
    path = models_dir / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.exists():
        print(f"note: {path} not found; keeping the stored SmolLM2 template", file=sys.stderr)
        return
    import gguf
    template = gguf.GGUFReader(str(path)).fields["tokenizer.chat_template"].contents()
    (TEMPLATE_DIR / TEMPLATES["smollm2"][0]).write_text(template, encoding="utf-8", newline="")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models-dir", type=Path, default=ROOT / "models")
    args = ap.parse_args()
    refresh_smollm2(args.models_dir)
    cases = conversation_cases()
    golden = {
        "generator": "scripts/gen_golden_chat.py",
        "jinja2_version": jinja2.__version__,
        "environment": "ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, "
                       "extensions=[generation, loopcontrols]) with HF's tojson, raise_exception, strftime_now",
        "now": NOW.isoformat(),
        "templates": {name: {"file": f, "model": model} for name, (f, model, _, _) in TEMPLATES.items()},
        "cases": cases + feature_cases(),
        "syntax_errors": syntax_error_cases(),
    }
    out = OUT_DIR / "renders.json"
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        json.dump(golden, f, indent=1, ensure_ascii=False)
        f.write("\n")
    n_err = sum(1 for c in golden["cases"] if "error" in c)
    print(f"wrote {out}: {len(golden['cases'])} cases ({n_err} errors), "
          f"{len(golden['syntax_errors'])} syntax errors")


if __name__ == "__main__":
    main()
