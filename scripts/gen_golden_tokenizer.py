#!/usr/bin/env python3
"""Golden tokenizer data for tests/unit/tokenizer/.

Writes
  tests/golden/tokenizer/corpus.json   the test strings (>= 500): prose, code, numbers, whitespace,
                                       CJK, emoji, combining marks, scripts, special-token text, edges
  tests/golden/tokenizer/<model>.json  per model (and per pre-tokenizer variant over SmolLM2's
                                       vocabulary: smollm2-vocab-pre-<pre>.json), the ids llama.cpp's tokenizer produces (through
                                       llama-cpp-python, vocab_only) -- the primary oracle, since wisp
                                       must feed the model exactly what llama.cpp feeds it -- plus, for
                                       byte-level BPE models, the ids of a Hugging Face `tokenizers`
                                       Tokenizer rebuilt from the GGUF's vocab and merges, with every
                                       disagreement between the two oracles listed (not hidden).

Per corpus string i and model, a case records
  "s":  ids for tokenize(text, add_special=True,  parse_special=True)   (the chat path)
  "p":  ids for tokenize(text, add_special=False, parse_special=False)  (plain text), omitted when
        equal to "s" without the BOS/EOS that add_special added
  "dx": llama.cpp's detokenization of "p" (token_to_piece concatenated, specials not rendered), as
        hex, when it is not the input string itself; omitted when the round trip is exact
It also records token_to_piece for a sample of ids (hex, render_special false and true).

Usage:  python3 scripts/gen_golden_tokenizer.py [--models-dir models]
Needs:  llama-cpp-python, tokenizers, gguf, numpy.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "tests" / "golden" / "tokenizer"

MODELS = {
    # golden name -> (gguf file, build an HF oracle from the GGUF?)
    "smollm2-135m": ("SmolLM2-135M-Instruct.Q4_1.gguf", True),
    "gemma3-270m": ("gemma-3-270m-q4_k_m.gguf", False),
}

# tokenizer.ggml.pre values exercised over SmolLM2's vocabulary (tensor-less GGUF copies) -> HF oracle?
PRE_VARIANTS = {"llama-bpe": True, "qwen2": True, "gpt-2": True, "gpt-4o": True, "default": False,
                # llama.cpp is the only oracle of these (its regexes run over its collapsed text)
                "tekken": False, "qwen35": False, "bailingmoe": False, "laguna": False, "ufakzeka": False,
                "seed-coder": False, "minicpm5": False, "deepseek-v3": False, "falcon": False,
                "spark2_5": False, "bloom": False, "viking": False,
                "deepseek-coder": False, "exaone-moe": False, "jais-2": False,
                "superbpe": False, "tiny_aya": False, "youtu": False, "kimi-k2": False, "afmoe": False,
                "deepseek-llm": False, "granite-embed-multi-97m": False, "chameleon": False}


# ----------------------------------------------------------------------------------------------
# corpus
# ----------------------------------------------------------------------------------------------

PROSE = [
    "Hello world",
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "It was the best of times, it was the worst of times.",
    "She sells sea shells by the sea shore.",
    "I can't believe it's not butter!",
    "They'll be here soon; we've waited long enough, haven't we?",
    "You're right -- I'd rather not. He's gone, and she'd left. We'm not sure.",
    "DON'T SHOUT. I'M LISTENING. THEY'RE HERE. WE'VE GOT IT. SHE'LL COME. HE'D KNOW.",
    "O'Brien's dog's bone isn't 'really' his.",
    "\"Quoted text,\" he said, \"is tricky.\"",
    "Rock 'n' roll never dies.",
    "The year 1984 was a novel; 2001 was a film.",
    "Mr. Smith went to Washington D.C. on Jan. 3rd, 2020.",
    "e.g. i.e. etc. vs. a.m. p.m.",
    "Wait... what?! Really?!?",
    "Semicolons; colons: dashes - em-dashes \u2014 en-dashes \u2013 ellipses\u2026",
    "In 1492, Columbus sailed the ocean blue.",
    "A man, a plan, a canal: Panama.",
    "To be, or not to be, that is the question:",
    "Whether 'tis nobler in the mind to suffer the slings and arrows of outrageous fortune,",
    "The mitochondria is the powerhouse of the cell.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "Supercalifragilisticexpialidocious is a very long word.",
    "Pneumonoultramicroscopicsilicovolcanoconiosis",
    "antidisestablishmentarianism floccinaucinihilipilification",
    "I have 3 apples and 12 oranges, totalling 15 fruits.",
    "Call me at 555-0123 or (555) 867-5309.",
    "Email: someone@example.com, web: https://www.example.org/path?q=1&r=two#frag",
    "The price is $19.99 (or \u20ac17.50, \u00a315, \u00a52000).",
    "50% off! Buy 2, get 1 free*. *Terms apply.",
    "CamelCaseWordsAndsnake_case_words and kebab-case-words.",
    "ALL CAPS SENTENCE WITH SOME WORDS.",
    "lowercase sentence without punctuation",
    "Mixed CASE and MiXeD cAsE letters",
    "The caf\u00e9 served cr\u00e8me br\u00fbl\u00e9e and a pi\u00f1a colada at the na\u00efve r\u00e9sum\u00e9 party.",
    "Stra\u00dfe, \u00fcber, \u00e4rger, \u00f6l -- German umlauts and \u00df.",
    "\u00c5ngstr\u00f6m, \u00d8resund, \u00c6sir, \u00e6, \u00f8, \u00e5",
    "Fran\u00e7ais: o\u00f9 est la biblioth\u00e8que? \u00c0 c\u00f4t\u00e9 de l'\u00e9glise.",
    "Espa\u00f1ol: \u00bfD\u00f3nde est\u00e1 el ba\u00f1o? \u00a1Aqu\u00ed!",
    "Portugu\u00eas: n\u00e3o, cora\u00e7\u00e3o, a\u00e7\u00e3o, p\u00e3o.",
    "Polski: Za\u017c\u00f3\u0142\u0107 g\u0119\u015bl\u0105 ja\u017a\u0144.",
    "\u010ce\u0161tina: P\u0159\u00edli\u0161 \u017elu\u0165ou\u010dk\u00fd k\u016f\u0148 \u00fap\u011bl \u010f\u00e1belsk\u00e9 \u00f3dy.",
    "T\u00fcrk\u00e7e: \u0130stanbul, \u0131\u015f\u0131k, \u011f\u00fc\u00e7, \u015feker.",
    "Ti\u1ebfng Vi\u1ec7t: Xin ch\u00e0o, t\u00f4i l\u00e0 ng\u01b0\u1eddi Vi\u1ec7t Nam.",
    "Once upon a time, in a land far, far away, there lived a king who had three daughters.",
    "The committee's report, which was published on Tuesday, recommended sweeping changes to the tax code.",
    "Despite the rain, the marathon went ahead; over 30,000 runners finished.",
    "Scientists at CERN announced the discovery of a new particle in 2012.",
    "What is the capital of France? The capital of France is Paris.",
    "Q: How many legs does a spider have?\nA: Eight.",
    "Step 1: Preheat the oven to 180\u00b0C.\nStep 2: Mix the flour and sugar.\nStep 3: Bake for 25 minutes.",
    "Dear Sir or Madam,\n\nI am writing to enquire about the position advertised.\n\nYours faithfully,\nJ. Doe",
    "- item one\n- item two\n  - nested item\n* star item\n1. numbered\n2. list",
    "# Heading\n\nSome *emphasis* and **strong** text, `inline code`, and a [link](http://x.y).",
    "| col a | col b |\n|-------|-------|\n| 1     | 2     |",
    "> A quoted line\n> another quoted line",
    "The end.",
    "Yes.",
    "No!",
    "OK",
    "ok",
    "Ok?",
    "hmm...",
    "Thank you very much for your help with this matter; it is greatly appreciated.",
    "Artificial intelligence (AI) is intelligence demonstrated by machines.",
    "Large language models predict the next token given the previous ones.",
    "A transformer uses self-attention to weigh the importance of each token.",
    "Tokenization splits text into subword units such as 'token', 'ization'.",
    "Bob's, Alice's and Carol's accounts; the boss's office; the bosses' offices.",
]

CODE = [
    "def hello():\n    print(\"Hello, world!\")\n",
    "for i in range(10):\n    if i % 2 == 0:\n        continue\n    print(i)",
    "class Foo(Bar):\n    \"\"\"Docstring.\"\"\"\n\n    def __init__(self, x: int = 3) -> None:\n        self.x = x\n",
    "import numpy as np\nx = np.zeros((3, 4), dtype=np.float32)\ny = x @ x.T\n",
    "lambda x: x ** 2 + 2 * x - 1",
    "print(f\"{name!r:>10} = {value:.3f}\")",
    "async def main():\n\tawait asyncio.sleep(0.1)\n",
    "#include <stdio.h>\n\nint main(void) {\n    printf(\"%d\\n\", 42);\n    return 0;\n}\n",
    "std::vector<std::pair<int, float>> v{{1, 2.0f}, {3, 4.5f}};",
    "template <typename T>\nconstexpr T max(T a, T b) { return a > b ? a : b; }",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "if (x != nullptr && x->next) { x = x->next; } else { x = NULL; }",
    "#define MAX(a,b) ((a)>(b)?(a):(b))",
    "uint8_t buf[256]; memset(buf, 0xFF, sizeof buf);",
    "auto [it, inserted] = map.try_emplace(key, std::move(value));",
    "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}",
    "impl<'a> Iterator for Tokens<'a> { type Item = &'a str; }",
    "match opt { Some(x) => x, None => return Err(\"none\".into()), }",
    "func main() {\n\tfmt.Println(\"hi\")\n\tfor i := 0; i < 3; i++ {\n\t\tgo work(i)\n\t}\n}",
    "if err != nil {\n\treturn nil, fmt.Errorf(\"open %s: %w\", path, err)\n}",
    "const add = (a, b) => a + b;\nconsole.log(add(1, 2));",
    "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }",
    "let obj = { key: 'value', 'quoted-key': [1, 2, 3], nested: { a: null } };",
    "document.querySelector('#id > .cls').addEventListener('click', e => e.preventDefault());",
    "const re = /^[a-z0-9_.+-]+@[a-z0-9-]+\\.[a-z]{2,}$/i;",
    "public static void main(String[] args) {\n    System.out.println(\"Hello\");\n}",
    "SELECT id, name FROM users WHERE age >= 18 AND name LIKE 'A%' ORDER BY id DESC LIMIT 10;",
    "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y');",
    "<!DOCTYPE html>\n<html>\n  <head><title>Test</title></head>\n  <body><p class=\"x\">Hi &amp; bye</p></body>\n</html>",
    "<div id=\"main\" style=\"color: red;\"><span>text</span></div>",
    "<table><tr><td>1</td><td>2</td></tr></table>",
    "{\"name\": \"wisp\", \"version\": [0, 1, 0], \"tags\": {\"fast\": true, \"gpu\": null}}",
    "[{\"a\":1},{\"b\":2.5e-3},{\"c\":\"\\u00e9\"}]",
    "key: value\nlist:\n  - a\n  - b\nnested:\n  inner: 3\n",
    "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do\n  echo \"$f\" | wc -c\ndone",
    "grep -rn 'TODO' src/ | awk -F: '{print $1}' | sort | uniq -c",
    "all: build\n\nbuild:\n\t$(CC) -O2 -o app main.c\n\nclean:\n\trm -f app\n",
    "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build",
    "x += 1; y -= 2; z *= 3; w /= 4; v %= 5; u <<= 1; t >>= 2; s &= 3; r |= 4; q ^= 5;",
    "a == b != c <= d >= e && f || !g",
    "i++ ++i i-- --i -> => :: ... ?. ?? ** //",
    "\t\tindented with tabs\n    indented with spaces\n\t  mixed",
    "    return x;\n}\n\n\n",
    "// single line comment\n/* block\n   comment */\n# hash comment\n-- sql comment",
    "#[derive(Debug, Clone)]\nstruct Point { x: f64, y: f64 }",
    "@decorator\ndef f(*args, **kwargs): ...",
    "$x = array('a' => 1, 'b' => 2); echo $x['a'];",
    "puts \"Hello #{name}\" if defined?(name)",
    "(defun square (x) (* x x))",
    "main = putStrLn \"Hello\" >> return ()",
    "\\begin{equation} E = mc^2 \\end{equation}",
    "$\\frac{a}{b} + \\sqrt{x^2 + y^2} = \\sum_{i=0}^{n} i$",
    "0x1F 0b1010 0o755 1e10 3.14f 1_000_000 0xDEADBEEF",
    "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-vocab.cpp#L100-L200",
    "C:\\Users\\name\\Documents\\file.txt",
    "/usr/local/lib/python3.11/site-packages/",
    "user@host:~$ ls -la ~/.config",
    "git commit -m \"Fix bug #123\" && git push origin main",
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<root attr='1'/>",
    "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new",
]

NUMBERS_FIXED = [
    "0", "00", "007", "3.14159", "-42", "+17", "1,234", "1,234,567.89", "1.234.567,89",
    "1e-9", "6.022e23", "-0.0", "1/2", "3/4", "50%", "99.9%", "$1,000,000", "10^6",
    "2024-01-15", "15/01/2024", "12:34:56", "T-minus 10, 9, 8", "v1.2.3", "3.10.12-rc1",
    "IPv4 192.168.0.1", "IPv6 2001:db8::ff00:42:8329", "+1 (800) 555-1234",
    "ISBN 978-3-16-148410-0", "1st 2nd 3rd 4th 21st 22nd 103rd", "1000000000000000000000",
    "3.141592653589793238462643383279502884197169399375105820974944",
    "0.1 + 0.2 = 0.30000000000000004",
    "\u0663\u0664\u0665 \u0968\u0969 \u00b2\u00b3\u00b9 \u00bd \u2167 \u2460\u2461 \uff11\uff12\uff13",
    "x\u00b2 + y\u00b2 = z\u00b2", "H\u2082O", "10\u2076", "\u2153 cup",
    "\u4e00\u4e8c\u4e09 123 \u767e\u5343\u4e07",
]

WHITESPACE = [
    " ", "  ", "   ", "    ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r\n\r\n", "\r",
    " \n", "\n ", " \t ", "\t \t", " \r\n ",
    "a b", "a  b", "a   b", "a    b", "a\tb", "a\t\tb", "a\nb", "a\n\nb", "a\r\nb", "a \nb", "a\n b",
    " leading space", "  two leading spaces", "trailing space ", "trailing spaces   ",
    "   both sides   ", "\tleading tab", "trailing tab\t", "\nleading newline", "trailing newline\n",
    "line1\nline2\nline3", "line1\r\nline2\r\nline3\r\n", "para1\n\n\npara2", "x \n \n y",
    "word\u00a0nbsp", "ideographic\u3000space", "line\u2028separator", "para\u2029separator",
    "next\u0085line", "thin\u2009space", "em\u2003space", "narrow\u202fnbsp", "zero\u200bwidth",
    "vertical\x0btab", "form\x0cfeed", "mixed \t\n\r\n \t end",
    " 1 2 3 ", "1  2   3", " .", "  .", " ,", "a , b", "hello !", "?!  ", "x\t\t\ty",
]

CJK = [
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01",
    "\u6211\u7231\u5317\u4eac\u5929\u5b89\u95e8\u3002",
    "\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff0c\u6211\u4eec\u53bb\u516c\u56ed\u6563\u6b65\u5427\u3002",
    "\u4e2d\u6587\u5b57\u7b26\u548cEnglish words\u6df7\u5408\u5728\u4e00\u8d77\u3002",
    "\u6a5f\u68b0\u5b66\u7fd2\u3068\u81ea\u7136\u8a00\u8a9e\u51e6\u7406",
    "\u3053\u3093\u306b\u3061\u306f\u3001\u4e16\u754c\uff01",
    "\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3068\u6f22\u5b57\u3002",
    "\u6771\u4eac\u30bf\u30ef\u30fc\u306f333\u30e1\u30fc\u30c8\u30eb\u3067\u3059\u3002",
    "\uc548\ub155\ud558\uc138\uc694, \uc138\uacc4!",
    "\ud55c\uad6d\uc5b4\ub294 \ud55c\uae00\ub85c \uc501\ub2c8\ub2e4.",
    "\u3010\u6ce8\u610f\u3011\u300c\u5f15\u7528\u300d\u300e\u4e8c\u91cd\u300f\uff08\u62ec\u5f27\uff09",
    "\u5168\u89d2\uff21\uff22\uff23\uff41\uff42\uff43\uff01\uff1f",
    "\u9f98\u9f49\u7e8c\u7e8d \u5b57\u5b57\u5b57\u5b57\u5b57\u5b57\u5b57\u5b57",
    "\U00020000\U0002a6d6 rare CJK extension B",
    "\u3042",
    "\u4e2d",
    "\ud55c",
]

EMOJI = [
    "\U0001F600", "\U0001F600\U0001F601\U0001F602", "I love you \u2764\ufe0f", "\u2764",
    "\U0001F44D\U0001F3FD thumbs up medium skin", "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466",
    "\U0001F469\u200d\U0001F4BB woman technologist", "\U0001F3F3\ufe0f\u200d\U0001F308 rainbow flag",
    "\U0001F1FA\U0001F1F8 \U0001F1EF\U0001F1F5 \U0001F1E9\U0001F1EA flags", "1\ufe0f\u20e3 keycap",
    "#\ufe0f\u20e3*\ufe0f\u20e3", "\U0001F9D1\U0001F3FF\u200d\U0001F9B0", "\u263a\ufe0e text style",
    "emoji at end \U0001F680", "\U0001F680 emoji at start", "mid\U0001F525dle",
    "\U0001F923\U0001F923\U0001F923\U0001F923\U0001F923", "\U0001FAE0 newer emoji \U0001FAE8",
    "\u2705 done \u274c failed \u26a0\ufe0f warning", "\U0001F4AF%",
    "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F scotland",
]

SCRIPTS = [
    "e\u0301", "cafe\u0301", "n\u0303", "a\u0308o\u0308u\u0308", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u0334\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O\u0342\u030c\u030c\u0358\u0328\u0335\u0339\u033b\u031d\u0333",
    "\u0301 leading combining mark", "x\u20dd enclosing",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u0627\u0644\u0644\u063a\u0629 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u062c\u0645\u064a\u0644\u0629 \u062c\u062f\u0627\u064b.",
    "\u0628\u0650\u0633\u0652\u0645\u0650 \u0627\u0644\u0644\u0651\u064e\u0647\u0650",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd", "\u05d1\u05bc\u05b0\u05e8\u05b5\u05d0\u05e9\u05b4\u05c1\u05d9\u05ea",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e \u092c\u0939\u0941\u0924 \u0938\u0941\u0902\u0926\u0930 \u0939\u0948\u0964",
    "\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f \u0936\u094d\u0930\u0940",
    "\u09ac\u09be\u0982\u09b2\u09be \u09ad\u09be\u09b7\u09be", "\u0ba4\u0bae\u0bbf\u0bb4\u0bcd", "\u0c24\u0c46\u0c32\u0c41\u0c17\u0c41",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a", "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e44\u0e21\u0e48\u0e21\u0e35\u0e0a\u0e48\u0e2d\u0e07\u0e27\u0e48\u0e32\u0e07",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!",
    "\u0421\u044a\u0435\u0448\u044c \u0436\u0435 \u0435\u0449\u0451 \u044d\u0442\u0438\u0445 \u043c\u044f\u0433\u043a\u0438\u0445 \u0444\u0440\u0430\u043d\u0446\u0443\u0437\u0441\u043a\u0438\u0445 \u0431\u0443\u043b\u043e\u043a.",
    "\u0423\u043a\u0440\u0430\u0457\u043d\u0441\u044c\u043a\u0430 \u043c\u043e\u0432\u0430: \u0491\u0454\u0456\u0457",
    "\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac: \u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1 \u03ba\u03cc\u03c3\u03bc\u03b5",
    "\u0532\u0561\u0580\u0587 \u0561\u0577\u056d\u0561\u0580\u0570", "\u10d2\u10d0\u10db\u10d0\u10e0\u10ef\u10dd\u10d1\u10d0",
    "\u12a0\u121b\u122d\u129b", "\u1780\u1798\u17d2\u1796\u17bb\u1787\u17b6", "\u0f56\u0f7c\u0f51\u0f0b\u0f61\u0f72\u0f42",
    "\u1403\u14c4\u1483\u144e\u1450\u1466", "\u16a0\u16a2\u16a6\u16a8\u16b1\u16b2", "\U00010348\U00010330\U00010349 gothic",
    "\U0001D573\U0001D58D\U0001D58A math fraktur", "\U0001D400\U0001D401 bold math",
    "\u00c0\u00c1\u00c2\u00c3\u00c4\u00c5\u00c6\u00c7\u00c8\u00c9\u00ca\u00cb",
    "\u0100\u0101\u0102\u0103\u0104\u0105 \u01c4\u01c5\u01c6 \u1e9e\u00df",
    "\ufb01 ligature \ufb02 \ufb00", "\u2126 \u212a \u212b signs", "\u2603 \u2622 \u262f \u2660 \u2663 \u2665 \u2666",
    "\u00a9 \u00ae \u2122 \u00a7 \u00b6 \u2020 \u2021 \u2022 \u00b0",
    "\u2190 \u2192 \u2191 \u2193 \u21d2 \u21d4 \u2200 \u2203 \u2208 \u2211 \u222b \u221e \u2260 \u2264 \u2265",
    "\u201cSmart quotes\u201d and \u2018single\u2019 \u00abguillemets\u00bb \u201elow\u201c",
    "soft\u00adhyphen", "zero\u200dwidth\u200cjoiners", "bidi\u200fmark\u200e", "bom\ufeffinside",
    "\ue000 private use \U000F0000", "unassigned \u0378 \U000E0080",
    "\u0000nul", "ctrl \x01\x02\x03\x1b[0m", "del\x7f",
    "\u00ff\u00fe\u00fd", "\u0100\u0120\u0121\u0122 byte-level alphabet look-alikes \u0120hello \u010a",
    "\u2581leading lower one-eighth block \u2581\u2581", "\u2581", "\u2581\u2581\u2581 x",
]

SPECIAL_TEXT = [
    "<|im_start|>", "<|im_end|>", "<|endoftext|>",
    "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n",
    "<|im_start|><|im_end|>", "<|im_start|>  <|im_end|>", " <|im_start|> ", "x<|im_start|>y",
    "<|im_start", "im_start|>", "<|im_start|<|im_end|>>", "<<|im_start|>>", "<|im_start|><|im_start|>",
    "<start_of_turn>user\nWhy is the sky blue?<end_of_turn>\n<start_of_turn>model\n",
    "<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "<pad>", "<unk>", "<mask>", "[multimodal]",
    "<bos>Hello", "Hello<eos>", "<start_of_turn>model\nSure!  Here  is  it.<end_of_turn>",
    "<unused0>", "<unused99>", "<start_of_image>", "<end_of_image>",
    "<table><tr><td>cell</td></tr></table>", "<s>text</s>", "<b>bold</b> and <i>italic</i>",
    "<h1>Title</h1>\n<p>para</p>", "<code>x = 1</code>", "<a href=\"u\">link</a>",
    "<repo_name>wisp<file_sep>main.cpp<filename>x", "<jupyter_code>print(1)<jupyter_output>1",
    "<issue_start>bug<issue_comment>fixed<issue_closed>", "<gh_stars>100",
    "<|endoftext|><|endoftext|>", "text<|endoftext|>more text",
    "<|eot_id|>", "<|begin_of_text|>", "</s>", "<s>", "[INST] hi [/INST]",
    "<start_of_turn>user\n\n\n\thi\t\t<end_of_turn>", "\n\n<start_of_turn>", "<end_of_turn>\n\n",
]

EDGE = [
    "", "a", "A", "z", "0", "9", ".", "'", "\"", "'s", "'S", "'t", "'re", "'ve", "'m", "'ll", "'d",
    "''", "'''", "x's", "x'S", "x'Re", "'ll've", "a'", "'a", "it's'", " 's", "don't", "DON'T",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "ab" * 60, "abc " * 40, "!" * 50, "-" * 80, "=" * 40, "." * 30, "_" * 30, "#" * 20, "*" * 20,
    "\U0001F600" * 30, "\u4e2d" * 50, " " * 40, " " * 100, "\t" * 17, "\n" * 40, "\r\n" * 10,
    "a" * 1000,
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore "
    "et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut "
    "aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum "
    "dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui "
    "officia deserunt mollit anim id est laborum.",
]


def numbers_generated() -> list[str]:
    out = []
    digits = "31415926535897932384626433832795028841971693993751058209749445923078164062862089986280"
    for n in range(1, 41):
        out.append(digits[:n])
    for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20):
        out.append("x" + digits[:n] + "y")
        out.append(" " + digits[:n])
        out.append("a " + digits[:n] + " b")
    for v in (0, 7, 42, 100, 999, 1000, 1001, 65535, 123456, 1234567, 2147483647, 18446744073709551615):
        out.append(f"{v:,}")
        out.append(f"{-v}")
    out += [f"{x:.6f}" for x in (0.5, 1.0 / 3, 2.718281828, 1e-5, 12345.678)]
    return out


def single_chars() -> list[str]:
    # Every printable and control ASCII character alone, plus a few bytes of the byte-level alphabet.
    out = [chr(c) for c in range(1, 128)]
    out += ["\u0080", "\u00a0", "\u00ad", "\u00ff", "\u0100", "\u0143", "\u07ff", "\u0800", "\uffff",
            "\ufffd", "\U00010000", "\U0010fffd"]
    return out


def generated_mix(n: int) -> list[str]:
    # Deterministic pseudo-random strings over a pool that mixes every class the splitters care about.
    rng = random.Random(20240601)
    pool = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") +
            list(" \t\n\r.,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`") +
            ["  ", "   ", "\r\n", "'s", "'ll", "<|im_start|>", "<end_of_turn>", "\u00e9", "\u00df", "\u4e2d",
             "\u6587", "\u3042", "\ud55c", "\u0434", "\u03bb", "\u0645", "\u05d0", "\u0928\u094d",
             "\U0001F600", "\U0001F468\u200d\U0001F469", "\u0301", "\u00a0", "\u3000", "\u0663", "\u00b2",
             "\u2581", "\u0120", "\u2028", "\u200b", "\ufeff", "\u20ac", "\u2014", "\u2026"])
    out = []
    for _ in range(n):
        k = rng.randint(1, 24)
        out.append("".join(rng.choice(pool) for _ in range(k)))
    return out


def build_corpus() -> list[str]:
    strings = (PROSE + CODE + NUMBERS_FIXED + numbers_generated() + WHITESPACE + CJK + EMOJI + SCRIPTS +
               SPECIAL_TEXT + EDGE + single_chars() + generated_mix(120))
    seen = set()
    corpus = []
    for s in strings:
        if s not in seen:
            seen.add(s)
            corpus.append(s)
    return corpus


# ----------------------------------------------------------------------------------------------
# oracles
# ----------------------------------------------------------------------------------------------

def gguf_vocab(path: Path) -> dict:
    import gguf

    r = gguf.GGUFReader(str(path))

    def strings(key):
        f = r.fields[key]
        return [bytes(f.parts[i]).decode("utf-8") for i in f.data]

    def scalar(key, default=None):
        f = r.fields.get(key)
        if f is None:
            return default
        v = f.parts[-1]
        return bytes(v).decode() if f.types[0] == gguf.GGUFValueType.STRING else v.tolist()[0]

    f_types = r.fields["tokenizer.ggml.token_type"]
    return {
        "model": scalar("tokenizer.ggml.model"),
        "pre": scalar("tokenizer.ggml.pre", ""),
        "tokens": strings("tokenizer.ggml.tokens"),
        "types": [int(f_types.parts[i][0]) for i in f_types.data],
        "merges": strings("tokenizer.ggml.merges") if "tokenizer.ggml.merges" in r.fields else [],
    }


# The regexes of the Hugging Face tokenizer.json files these pre-tokenizer names stand for.
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                r"\s*[\r\n]+|\s+(?!\S)|\s+")
# o200k's (gpt-4o, gpt-oss): llama.cpp splits with a rewrite of it that treats every non-ASCII letter
# as both cases, so the two oracles can disagree on non-ASCII upper/lower case runs (recorded).
GPT4O_REGEX = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
               r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
               r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
               r"\s*[\r\n]+|\s+(?!\S)|\s+")


def hf_tokenizer_from_gguf(v: dict, pre: str):
    """A tokenizers.Tokenizer rebuilt from the GGUF: BPE over its vocab and merges, the pre-tokenizer
    the model family's tokenizer.json declares for `pre`, and the control tokens as special added
    tokens. For pre='smollm' this is SmolLM2's own tokenizer.json setup."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    byte_level_split = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)
    if pre == "smollm":
        pt = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        ])
    elif pre == "gpt-2":
        pt = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    elif pre == "llama-bpe":
        pt = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated"), byte_level_split])
    elif pre == "gpt-4o":
        pt = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(GPT4O_REGEX), behavior="isolated"), byte_level_split])
    elif pre == "qwen2":
        pt = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated"), byte_level_split])
    else:
        return None  # llama.cpp's "default" splitter has no tokenizer.json counterpart
    vocab = {t: i for i, t in enumerate(v["tokens"])}
    merges = [tuple(m.split(" ", 1)) for m in v["merges"]]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, ignore_merges=(pre == "llama-bpe")))
    tok.pre_tokenizer = pt
    tok.decoder = decoders.ByteLevel()
    specials = [AddedToken(t, special=True, normalized=False) for t, ty in zip(v["tokens"], v["types"]) if ty == 3]
    tok.add_special_tokens(specials)
    return tok


def gguf_with_pre(src: Path, pre: str, dst: Path, extra_tokens: tuple[str, ...] = (), extra_type: int = 3,
                  extra_merges: tuple[str, ...] = ()) -> None:
    """A tensor-less copy of `src`'s metadata with tokenizer.ggml.pre replaced: enough for
    llama.cpp's vocab_only load, and a way to run the other pre-tokenizers over a real vocabulary.
    extra_tokens are appended to the vocabulary as extra_type tokens (3: control, made by no merge),
    extra_merges after the file's merges (the lowest ranks)."""
    import gguf

    r = gguf.GGUFReader(str(src))
    w = gguf.GGUFWriter(str(dst), arch=bytes(r.fields["general.architecture"].parts[-1]).decode())
    for k, f in r.fields.items():
        if k.startswith("GGUF.") or k == "general.architecture":
            continue
        t = f.types[0]
        if k == "tokenizer.ggml.pre":
            w.add_string(k, pre)
        elif t == gguf.GGUFValueType.ARRAY:
            if f.types[1] == gguf.GGUFValueType.STRING:
                extra = (list(extra_tokens) if k == "tokenizer.ggml.tokens" else
                         list(extra_merges) if k == "tokenizer.ggml.merges" else [])
                w.add_array(k, [bytes(f.parts[i]).decode() for i in f.data] + extra)
            else:
                extra = [extra_type] * len(extra_tokens) if k == "tokenizer.ggml.token_type" else []
                assert k != "tokenizer.ggml.scores" or not extra_tokens, "scores would need extending too"
                w.add_key_value(k, [f.parts[i][0].item() for i in f.data] + extra, gguf.GGUFValueType.ARRAY,
                                sub_type=f.types[1])
        elif t == gguf.GGUFValueType.STRING:
            w.add_string(k, bytes(f.parts[-1]).decode())
        else:
            w.add_key_value(k, f.parts[-1][0].item(), t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def fnv1a_ids(ids: list[int]) -> str:
    """FNV-1a 64 over the ids as little-endian int32 (tests/unit/formats/fnv1a.h computes the same)."""
    import numpy as np

    h = 0xCBF29CE484222325
    for b in np.asarray(ids, dtype="<i4").tobytes():
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def wikitext_digest(oracle, hf, text: str) -> dict:
    ids = oracle.tokenize(text, False, False)
    out = {"n_tokens": len(ids), "fnv1a": fnv1a_ids(ids)}
    if hf is not None:
        hf.encode_special_tokens = True
        hf_ids = hf.encode(text, add_special_tokens=False).ids
        hf.encode_special_tokens = False
        out["hf_agrees"] = hf_ids == ids
        if hf_ids != ids:
            first = next((k for k, (a, b) in enumerate(zip(hf_ids, ids)) if a != b), min(len(hf_ids), len(ids)))
            out["hf_first_difference_at_token"] = first
    return out


class LlamaOracle:
    def __init__(self, path: Path):
        import llama_cpp

        self.llama_cpp = llama_cpp
        self.llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
        self.vocab = self.llm._model.vocab
        self.bos = self.llm.token_bos()
        self.eos = self.llm.token_eos()

    def tokenize(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=add_special, special=parse_special)

    def piece(self, token: int, special: bool) -> bytes:
        size = 256
        buf = (ctypes.c_char * size)()
        n = self.llama_cpp.llama_token_to_piece(self.vocab, token, buf, size, 0, special)
        assert 0 <= n <= size, n
        return bytes(buf[:n])

    def detokenize(self, ids: list[int]) -> bytes:
        # Plain concatenation of pieces: llama-cpp-python's own detokenize also drops a leading space
        # after BOS, which is a Python-binding convenience, not llama.cpp behaviour.
        return b"".join(self.piece(t, False) for t in ids)


def dump_compact(obj: dict, path: Path) -> None:
    """JSON with one case per line: diffable, and far smaller than indent=2."""
    lines = ["{"]
    items = list(obj.items())
    for k, (key, val) in enumerate(items):
        comma = "," if k + 1 < len(items) else ""
        if isinstance(val, list) and len(val) > 1 and key in ("strings", "cases", "pieces", "hf_disagreements"):
            lines.append(f"  {json.dumps(key)}: [")
            for j, item in enumerate(val):
                c = "," if j + 1 < len(val) else ""
                lines.append("    " + json.dumps(item, ensure_ascii=False, separators=(",", ":")) + c)
            lines.append("  ]" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: " + json.dumps(val, ensure_ascii=False) + comma)
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def golden_for_model(name: str, path: Path, with_hf: bool, corpus: list[str], wikitext: str | None,
                     variant_of: str | None = None, plain_only: bool | None = None) -> dict:
    """variant_of: the real model file whose vocabulary `path` (a tensor-less copy with another
    tokenizer.ggml.pre) carries; for variants only the plain ids are kept (unless plain_only is
    False), since special-token handling does not depend on the pre-tokenizer and is covered by the
    real models."""
    if plain_only is None:
        plain_only = variant_of is not None
    import llama_cpp

    oracle = LlamaOracle(path)
    v = gguf_vocab(path)
    hf = hf_tokenizer_from_gguf(v, v["pre"]) if with_hf else None

    cases = []
    hf_disagreements = []
    roundtrip_exact = 0
    for i, text in enumerate(corpus):
        with_special = oracle.tokenize(text, True, True)
        plain = oracle.tokenize(text, False, False)
        case = {"i": i, "s": with_special}
        stripped = list(with_special)
        if stripped and stripped[0] == oracle.bos and oracle.llm._model.add_bos_token():
            stripped = stripped[1:]
        if plain != stripped:
            case["p"] = plain
        detok = oracle.detokenize(plain)
        if detok == text.encode("utf-8"):
            roundtrip_exact += 1
        else:
            case["dx"] = detok.hex()  # hex: a detokenization need not be valid UTF-8
        if hf is not None:
            hf.encode_special_tokens = False
            hf_special = hf.encode(text, add_special_tokens=True).ids
            hf.encode_special_tokens = True
            hf_plain = hf.encode(text, add_special_tokens=False).ids
            hf.encode_special_tokens = False
            d = {}
            if hf_special != with_special:
                d["s"] = hf_special
            if hf_plain != plain:
                d["p"] = hf_plain
            if d:
                d = {"i": i, **d}
                hf_disagreements.append(d)
        if plain_only:
            case = {k: v for k, v in {"i": i, "p": plain, "dx": case.get("dx")}.items() if v is not None}
        cases.append(case)

    n_vocab = len(v["tokens"])
    sample = sorted(set(list(range(0, min(n_vocab, 400))) + list(range(0, n_vocab, 97)) +
                        list(range(max(0, n_vocab - 64), n_vocab))))
    pieces = []
    for t in sample:
        p0 = oracle.piece(t, False)
        p1 = oracle.piece(t, True)
        pieces.append([t, p0.hex()] + ([p1.hex()] if p1 != p0 else []))

    out = {
        "model_file": variant_of or path.name,
        "oracle": f"llama-cpp-python {llama_cpp.__version__} (llama.cpp tokenizer, vocab_only)",
        "tokenizer_model": v["model"],
        "tokenizer_pre": v["pre"],
        "n_vocab": n_vocab,
        "bos": oracle.bos,
        "eos": oracle.eos,
        "add_bos": bool(oracle.llm._model.add_bos_token()),
        "n_cases": len(cases),
        "roundtrip_exact": roundtrip_exact,
        "cases": cases,
    }
    if not plain_only:
        out["pieces"] = pieces
        # Which ids llama.cpp treats as end-of-generation, and how many as control tokens.
        vocab_p = oracle.vocab
        out["eog"] = [t for t in range(n_vocab) if llama_cpp.llama_vocab_is_eog(vocab_p, t)]
        out["n_control"] = sum(1 for t in range(n_vocab) if llama_cpp.llama_vocab_is_control(vocab_p, t))
    if wikitext is not None:
        out["wikitext"] = wikitext_digest(oracle, hf, wikitext)
    if hf is not None:
        import tokenizers

        out["hf_oracle"] = (f"tokenizers {tokenizers.__version__}: BPE from the GGUF vocab+merges, the "
                            f"tokenizer.json pre-tokenizer of pre={v['pre']!r}, control tokens as special")
        out["hf_disagreements"] = hf_disagreements
    elif not plain_only:
        out["hf_oracle"] = None
        out["hf_oracle_note"] = ("not built: the GGUF carries SentencePiece scores, not the BPE merges a "
                                 "tokenizers.models.BPE needs; llama.cpp is the oracle for this vocabulary")
    print(f"{name}: {len(cases)} cases, round trip exact on {roundtrip_exact}"
          + (f", HF disagrees with llama.cpp on {len(hf_disagreements)}" if hf is not None else ""))
    return out


# Gemma 4 and Sarvam MoE: SentencePiece-style BPE (spaces as U+2581, merges over the text's own
# characters, <0xNN> byte fallback). No such file is at hand, so Gemma 3's vocabulary stands in,
# with merges derived from it: for each normal token in id order, every split into two tokens
# (left part shorter first), tokens with a space left out. tests/unit/tokenizer builds the same
# list from the same file to load it.
SPM_AS_BPE = {
    # golden name -> (tokenizer.ggml.model, tokenizer.ggml.pre)
    "gemma3-vocab-bpe-gemma4": ("gemma4", "gemma4"),
    "gemma3-vocab-bpe-sarvam-moe": ("gpt2", "sarvam-moe"),
}


def spm_merges(tokens: list[str], types: list[int]) -> list[str]:
    index = set(tokens)
    merges = []
    for tok, ty in zip(tokens, types):
        if ty != 1 or " " in tok:
            continue
        for k in range(1, len(tok)):
            if tok[:k] in index and tok[k:] in index:
                merges.append(tok[:k] + " " + tok[k:])
    return merges


def gguf_spm_as_bpe(src: Path, model: str, pre: str, dst: Path) -> None:
    """A tensor-less copy of SentencePiece `src` as a BPE vocabulary: tokenizer.ggml.model and .pre
    replaced, spm_merges added, add_bos_token false (llama.cpp forces BOS for gemma4 itself)."""
    import gguf

    r = gguf.GGUFReader(str(src))
    v = gguf_vocab(src)
    w = gguf.GGUFWriter(str(dst), arch=bytes(r.fields["general.architecture"].parts[-1]).decode())
    for k, f in r.fields.items():
        if k.startswith("GGUF.") or k in ("general.architecture", "tokenizer.ggml.model", "tokenizer.ggml.pre",
                                          "tokenizer.ggml.add_bos_token", "tokenizer.ggml.merges"):
            continue
        t = f.types[0]
        if t == gguf.GGUFValueType.ARRAY:
            if f.types[1] == gguf.GGUFValueType.STRING:
                w.add_array(k, [bytes(f.parts[i]).decode() for i in f.data])
            else:
                w.add_key_value(k, [f.parts[i][0].item() for i in f.data], gguf.GGUFValueType.ARRAY,
                                sub_type=f.types[1])
        elif t == gguf.GGUFValueType.STRING:
            w.add_string(k, bytes(f.parts[-1]).decode())
        else:
            w.add_key_value(k, f.parts[-1][0].item(), t)
    w.add_string("tokenizer.ggml.model", model)
    w.add_string("tokenizer.ggml.pre", pre)
    w.add_bool("tokenizer.ggml.add_bos_token", False)
    w.add_array("tokenizer.ggml.merges", spm_merges(v["tokens"], v["types"]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def spm_as_bpe_goldens(models_dir: Path, corpus: list[str], wikitext: str | None, tmp: Path,
                       only: list[str] | None = None) -> None:
    src = models_dir / MODELS["gemma3-270m"][0]
    for name, (model, pre) in SPM_AS_BPE.items():
        if only and name not in only:
            continue
        path = tmp / f"{name}.gguf"
        gguf_spm_as_bpe(src, model, pre, path)
        dump_compact(golden_for_model(name, path, False, corpus, wikitext, variant_of=src.name, plain_only=False),
                     OUT_DIR / f"{name}.json")


# gpt-oss's harmony markers (o200k_harmony), appended to SmolLM2's vocabulary as control tokens the
# way the gpt-oss GGUFs carry them, under its pre-tokenizer: llama.cpp's loader adjusts these by
# text (<|channel|> and friends always rendered, <|end|> not an end of generation beside <|return|>
# and <|call|>), which this golden pins down.
HARMONY_TOKENS = ("<|startoftext|>", "<|return|>", "<|constrain|>", "<|channel|>", "<|start|>", "<|end|>",
                  "<|message|>", "<|call|>")
HARMONY_TEXTS = [
    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: "
    "2024-06\nCurrent date: 2025-03-07\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. "
    "Channel must be included for every message.<|end|><|start|>user<|message|>What's the capital of France?"
    "<|end|><|start|>assistant",
    "<|channel|>analysis<|message|>The user asks a simple question.<|end|><|start|>assistant<|channel|>final"
    "<|message|>Paris.<|return|>",
    "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Oslo\"}<|call|>",
    "<|startoftext|>plain <|constrain|>json text, ÉCOLE McDonald's HTTPServer 12345 //path\r\n",
]


def harmony_golden(base: Path, tmp: Path) -> dict:
    path = tmp / "smollm2-vocab-harmony.gguf"
    gguf_with_pre(base, "gpt-4o", path, HARMONY_TOKENS)
    oracle = LlamaOracle(path)
    import llama_cpp

    n_vocab = oracle.llm.n_vocab()
    extra = list(range(n_vocab - len(HARMONY_TOKENS), n_vocab))
    return {
        "model_file": base.name,
        "oracle": f"llama-cpp-python {llama_cpp.__version__} (llama.cpp tokenizer, vocab_only)",
        "tokenizer_pre": "gpt-4o",
        "appended_control_tokens": list(HARMONY_TOKENS),
        "n_vocab": n_vocab,
        "eog": [t for t in range(n_vocab) if llama_cpp.llama_vocab_is_eog(oracle.vocab, t)],
        "n_control": sum(1 for t in range(n_vocab) if llama_cpp.llama_vocab_is_control(oracle.vocab, t)),
        "pieces": [[t, oracle.piece(t, False).hex(), oracle.piece(t, True).hex()] for t in extra],
        "cases": [{"text": x, "s": oracle.tokenize(x, False, True), "p": oracle.tokenize(x, False, False)}
                  for x in HARMONY_TEXTS],
    }


# Chameleon isolates its sentinel and image-code text before the rest of its regexes.
CHAMELEON_TEXTS = [
    "<sentinel:0>", "a<sentinel:12>b", "<sentinel:>", "<sentinel:1x>", "<sentinel:3><sentinel:4>",
    "IMGIMGAZ", "IMGIMGABCDZ", "IMGIMGABCDEZ", "IMGIMGZ", "xIMGIMGIIZy", "IMGIMGAB", "IMGIMGJZ",
    "a  b    c      d\t\te\n\nf", "  ", "   ", "12,345.6!?\u3001\u00bf", "IMGIMGABZ<sentinel:9>  x",
]


def chameleon_golden(base: Path, tmp: Path) -> dict:
    import llama_cpp

    path = tmp / "smollm2-vocab-chameleon.gguf"
    gguf_with_pre(base, "chameleon", path)
    oracle = LlamaOracle(path)
    return {
        "model_file": base.name,
        "oracle": f"llama-cpp-python {llama_cpp.__version__} (llama.cpp tokenizer, vocab_only)",
        "tokenizer_pre": "chameleon",
        "cases": [{"t": x, "p": oracle.tokenize(x, False, False)} for x in CHAMELEON_TEXTS],
    }


def cased_texts(n: int = 800) -> list[str]:
    """Case runs the gpt-4o regex splits inside (HTTPServer, McDonald's, ÉCOLE, titlecase and
    modifier letters, combining marks), contractions in both cases, digits, slashes and line breaks,
    glued together at random (fixed seed): where its backtracking decides the words."""
    import random

    rng = random.Random(11)
    words = ["the", "The", "THE", "Server", "HTTP", "iPhone", "McDonald", "\u00c9COLE", "\u00c9cole", "stra\u00dfe",
             "STRASSE", "\u03a9mega", "\u03c9MEGA", "\u01c5ungla", "\u02b0ello", "\u4e2d\u6587", "\u0133ssel",
             "\u0130stanbul", "\ufb01ne"]
    seps = [" ", "'s", "'S", "'ll", "'LL", "'re", "'Ve", "'d", "'t", "'m", "'x", "\u0301", " 12345", "1", "/", "//",
            " /", "\n", "\r\n", " \n ", "  ", "\t", "-", ".", ""]
    return ["".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(1, 8))) for _ in range(n)]


def gpt4o_cased_golden(base: Path, tmp: Path, pre: str = "gpt-4o") -> dict:
    path = tmp / f"smollm2-vocab-{pre}.gguf"
    gguf_with_pre(base, pre, path)
    oracle = LlamaOracle(path)
    import llama_cpp

    return {
        "model_file": base.name,
        "oracle": f"llama-cpp-python {llama_cpp.__version__} (llama.cpp tokenizer, vocab_only)",
        "tokenizer_pre": pre,
        "cases": [{"t": x, "p": oracle.tokenize(x, False, False)} for x in cased_texts()],
    }


# Merges appended to SmolLM2's vocabulary so that words the pre-tokenizers split differently also
# tokenize differently: SmolLM2 itself isolates every digit and never merges across a contraction
# or a line break after punctuation, so over its plain vocabulary e.g. tekken and gpt-4o, or
# ufakzeka, seed-coder and qwen2, give the same ids. (byte-level text: Ġ space, Ċ newline)
BOUNDARY_MERGES = ("1 2", "12 3", "123 4", "1234 5", "Ġ 1", "it 's", "'s a", ". Ċ")
BOUNDARY_PRES = ("gpt-2", "smollm", "llama-bpe", "minicpm5", "qwen2", "bailingmoe", "laguna", "qwen35", "ufakzeka",
                 "seed-coder", "gpt-4o", "tekken", "deepseek-v3", "spark2_5", "deepseek-coder", "falcon", "bloom",
                 "viking", "exaone-moe", "jais-2", "superbpe", "tiny_aya", "youtu", "kimi-k2", "afmoe", "deepseek-llm",
                 "granite-embed-multi-97m", "chameleon", "default")


def boundary_texts(n: int = 300) -> list[str]:
    rng = random.Random(13)
    pieces = ["it", "'s", "'sa", "IT'S", "It", "1", "12", "123", "1234567", " 12345", " ", "  ", "\t", ".", ".\n",
              "\n", "\r\n", "\n\n", " \n", "e\u0301", "caf\u00e9", "\u00e9\u0301x", "x", "a", "Ab", "'", "!!",
              "/", "\u4e2d\u6587"]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 10))) for _ in range(n)]


def boundary_golden(base: Path, tmp: Path) -> dict:
    import llama_cpp

    merged = []
    for m in BOUNDARY_MERGES:
        a, b = m.split(" ")
        merged.append(a + b)
    texts = boundary_texts()
    ids = {}
    for pre in BOUNDARY_PRES:
        path = tmp / f"smollm2-vocab-boundaries-{pre}.gguf"
        gguf_with_pre(base, pre, path, tuple(merged), 1, BOUNDARY_MERGES)
        oracle = LlamaOracle(path)
        ids[pre] = [oracle.tokenize(x, False, False) for x in texts]
        del oracle
    return {
        "model_file": base.name,
        "oracle": f"llama-cpp-python {llama_cpp.__version__} (llama.cpp tokenizer, vocab_only)",
        "appended_tokens": merged,
        "appended_merges": list(BOUNDARY_MERGES),
        "texts": texts,
        "ids": ids,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models-dir", type=Path, default=ROOT / "models")
    ap.add_argument("--wikitext", type=Path, default=ROOT.parent / "shared" / "data" / "wikitext-2-test.txt",
                    help="also record token count and id digest of this text (a missing file is an error: goldens "
                    "without the digest would make the WikiText tests skip; --no-wikitext leaves it out on purpose)")
    ap.add_argument("--no-wikitext", action="store_true", help="write the goldens without the WikiText digest")
    ap.add_argument("--only-boundaries", action="store_true", help="write only smollm2-vocab-boundaries.json")
    ap.add_argument("--only-cased", nargs="+", metavar="PRE",
                    help="write only smollm2-vocab-pre-<PRE>-cased.json (gpt-4o's case-run texts); 'chameleon': "
                         "only smollm2-vocab-pre-chameleon-markers.json")
    ap.add_argument("--only-spm-as-bpe", nargs="*", metavar="NAME",
                    help="write only the gemma3-vocab-bpe-*.json goldens (Gemma 4 / Sarvam MoE style BPE), or these")
    ap.add_argument("--only-pre", nargs="+", metavar="PRE",
                    help="write only these smollm2-vocab-pre-<PRE>.json variants (the corpus must be unchanged)")
    args = ap.parse_args()
    # Bytes, decoded without newline translation: the file has \r\n line ends, which must reach
    # the tokenizers as they are.
    if not args.no_wikitext and not args.wikitext.is_file():
        ap.error(f"no WikiText file at {args.wikitext} (give --wikitext PATH, or --no-wikitext)")
    wikitext = None if args.no_wikitext else args.wikitext.read_bytes().decode("utf-8")

    corpus = build_corpus()
    assert len(corpus) >= 500, len(corpus)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    only = set(args.only_pre or ())
    base = args.models_dir / MODELS["smollm2-135m"][0]
    if args.only_boundaries:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            dump_compact(boundary_golden(base, Path(tmp)), OUT_DIR / "smollm2-vocab-boundaries.json")
        return 0
    if args.only_cased:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            if "chameleon" in args.only_cased:
                dump_compact(chameleon_golden(base, Path(tmp)), OUT_DIR / "smollm2-vocab-pre-chameleon-markers.json")
                args.only_cased.remove("chameleon")
            for pre in args.only_cased:
                dump_compact(gpt4o_cased_golden(base, Path(tmp), pre), OUT_DIR / f"smollm2-vocab-pre-{pre}-cased.json")
        return 0
    if args.only_spm_as_bpe is not None:
        import tempfile

        old = json.loads((OUT_DIR / "corpus.json").read_text(encoding="utf-8"))["strings"]
        assert old == corpus, "corpus.json is out of step with build_corpus(): rerun without --only-spm-as-bpe"
        with tempfile.TemporaryDirectory() as tmp:
            spm_as_bpe_goldens(args.models_dir, corpus, wikitext, Path(tmp), args.only_spm_as_bpe)
        return 0
    if only:
        old = json.loads((OUT_DIR / "corpus.json").read_text(encoding="utf-8"))["strings"]
        assert old == corpus, "corpus.json is out of step with build_corpus(): rerun without --only-pre"
        assert only <= set(PRE_VARIANTS), f"not in PRE_VARIANTS: {sorted(only - set(PRE_VARIANTS))}"
    else:
        dump_compact({"description": "tokenizer golden corpus; generated by scripts/gen_golden_tokenizer.py",
                      "count": len(corpus), "strings": corpus}, OUT_DIR / "corpus.json")
        print(f"corpus: {len(corpus)} strings")
        for name, (fname, with_hf) in MODELS.items():
            path = args.models_dir / fname
            if not path.exists():
                print(f"{name}: {path} absent, skipped", file=sys.stderr)
                continue
            dump_compact(golden_for_model(name, path, with_hf, corpus, wikitext), OUT_DIR / f"{name}.json")

    # The other byte-level pre-tokenizers, run over SmolLM2's real vocabulary and merges.
    if base.exists():
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            for pre, with_hf in PRE_VARIANTS.items():
                if only and pre not in only:
                    continue
                variant = Path(tmp) / f"smollm2-vocab-{pre}.gguf"
                gguf_with_pre(base, pre, variant)
                name = f"smollm2-vocab-pre-{pre}"
                dump_compact(golden_for_model(name, variant, with_hf, corpus, wikitext, variant_of=base.name),
                             OUT_DIR / f"{name}.json")
            if not only:
                dump_compact(harmony_golden(base, Path(tmp)), OUT_DIR / "smollm2-vocab-harmony.json")
                dump_compact(chameleon_golden(base, Path(tmp)), OUT_DIR / "smollm2-vocab-pre-chameleon-markers.json")
                for pre in ("gpt-4o", "granite-embed-multi-97m"):
                    dump_compact(gpt4o_cased_golden(base, Path(tmp), pre), OUT_DIR / f"smollm2-vocab-pre-{pre}-cased.json")
                dump_compact(boundary_golden(base, Path(tmp)), OUT_DIR / "smollm2-vocab-boundaries.json")
                if (args.models_dir / MODELS["gemma3-270m"][0]).exists():
                    spm_as_bpe_goldens(args.models_dir, corpus, wikitext, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
