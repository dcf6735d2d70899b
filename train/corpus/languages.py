"""Doc comment → definition pairs, per language, from a file's text.

No grammar per language: a doc comment is recognised by its markers, the
definition it documents is the next line that looks like one, and its extent
comes from braces (C family), `end` at the same indentation (Ruby, Lua), the
next line at the same or a lower indentation (Python, via ast), or the next
top-level line (Haskell). Each extractor yields (line, raw_doc, code).
"""
import ast
import html
import re

EXTENSIONS = {
    "python": (".py",), "rust": (".rs",), "go": (".go",), "java": (".java",), "kotlin": (".kt",),
    "scala": (".scala",), "csharp": (".cs",), "javascript": (".js", ".mjs", ".cjs"),
    "typescript": (".ts", ".tsx", ".mts"), "php": (".php",), "c": (".c", ".h"),
    "cpp": (".cpp", ".cc", ".cxx", ".hpp", ".hh", ".hxx", ".h", ".ipp"), "swift": (".swift",),
    "ruby": (".rb",), "lua": (".lua",), "haskell": (".hs", ".html"), "bash": (".sh", ".bash", ""),
    "zig": (".zig",), "elixir": (".ex", ".exs"),
}

MAX_CODE_LINES = 60
MIN_CODE_LINES = 3

# What starts a definition, per language (after any modifiers).
_MODIFIERS = (r"(?:(?:pub(?:\([^)]*\))?|export|default|public|private|protected|internal|static|final|abstract|"
              r"async|unsafe|extern(?:\s+\"C\")?|inline|virtual|override|open|sealed|data|suspend|const|constexpr|"
              r"fileprivate|mutating|declare|readonly|partial|lateinit|inner|operator|infix|tailrec|implicit|lazy|"
              r"case|template\s*<[^>]*>|@\w+(?:\([^)]*\))?)\s+)*")
_KEYWORDS = {
    "go": r"^(?:func|type)\b",
    "rust": _MODIFIERS + r"(?:fn|struct|enum|trait|impl|type|mod|macro_rules!|const|static|union)\b",
    "java": _MODIFIERS + r"(?:class|interface|enum|record|@interface)\b",
    "kotlin": _MODIFIERS + r"(?:fun|class|interface|object|val|var|enum\s+class|typealias)\b",
    "scala": _MODIFIERS + r"(?:def|class|trait|object|val|var|type)\b",
    "csharp": _MODIFIERS + r"(?:class|interface|struct|enum|record|delegate|namespace)\b",
    "swift": _MODIFIERS + r"(?:func|class|struct|enum|protocol|extension|init|var|let|typealias|subscript)\b",
    "javascript": _MODIFIERS + r"(?:function\*?|class|const|let|var)\b",
    "typescript": _MODIFIERS + r"(?:function\*?|class|interface|type|enum|namespace|const|let|var|abstract\s+class)\b",
    "php": _MODIFIERS + r"(?:function|class|interface|trait|enum)\b",
    "c": r"^\s*(?:typedef\s+)?(?:struct|enum|union)\b",
    "cpp": _MODIFIERS + r"(?:class|struct|enum|union|namespace|using|concept)\b",
    "zig": _MODIFIERS + r"(?:fn|const|var)\b",
    "bash": r"^\s*(?:function\s+[\w:.-]+|[\w:.-]+\s*\(\s*\)\s*\{?\s*$)",
}
_KEYWORD_RES = {lang: re.compile(p) for lang, p in _KEYWORDS.items()}
# A function head with a return type (C family, Java, C#): a type, a name, parentheses.
_C_HEAD = re.compile(r"^\s*[A-Za-z_][\w:<>,*&\s\[\]?]*[\s*&>]([A-Za-z_~][\w:]*)\s*\(")
# A JavaScript or TypeScript method or arrow function bound to a name.
_JS_METHOD = re.compile(r"^\s*(?:(?:static|async|get|set|public|private|protected|readonly|override)\s+)*"
                        r"(?:[\w$]+\s*(?:<[^>]*>)?\s*\([^;]*$|[\w$.]+\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>))")
_NOT_A_HEAD = re.compile(r"^\s*(?:return|if|for|while|switch|catch|else|do|throw|new|case|sizeof|delete)\b")
_ATTRIBUTE = re.compile(r"^\s*(#\[|#!\[|@[A-Za-z]|\[[A-Z][\w.]*(\(|\]))")


def extract(language, text, path=""):
    if language == "python":
        return list(python_pairs(text))
    if language == "haskell":
        if path.endswith(".html"):
            text = haddock_source(text)
        return list(haskell_pairs(text))
    if language in ("ruby", "lua", "elixir"):
        return list(end_pairs(language, text))
    if language == "bash":
        return list(brace_pairs(language, text, comment_style="hash"))
    return list(brace_pairs(language, text))


# ---- the C family: doc comments and brace-matched bodies -------------------------------------

def _doc_block_before(lines, i, language, comment_style):
    """The doc comment ending just above line i (skipping attributes), and where it starts."""
    j = i - 1
    while j >= 0 and _ATTRIBUTE.match(lines[j]) and comment_style != "hash":
        j -= 1
    if j < 0:
        return None, i
    line = lines[j].strip()
    if comment_style == "hash":
        if not line.startswith("#") or line.startswith("#!"):
            return None, i
        k = j
        while k - 1 >= 0 and lines[k - 1].strip().startswith("#") and not lines[k - 1].strip().startswith("#!"):
            k -= 1
        return "\n".join(lines[k:j + 1]), k
    if line.endswith("*/"):
        k = j
        while k >= 0 and "/*" not in lines[k]:
            k -= 1
        if k < 0:
            return None, i
        opener = lines[k].strip()
        if not (opener.startswith("/**") or opener.startswith("/*!") or
                (language in ("c", "cpp", "go") and opener.startswith("/*"))):
            return None, i
        return "\n".join(lines[k:j + 1]), k
    marker = "///" if language in ("rust", "swift", "zig", "csharp") else "//"
    if line.startswith(marker) and not line.startswith("//!"):
        if language in ("javascript", "typescript", "java", "kotlin", "scala", "php") and not line.startswith("///"):
            return None, i  # plain // comments above code there are rarely docs
        k = j
        while k - 1 >= 0 and lines[k - 1].strip().startswith(marker):
            k -= 1
        return "\n".join(lines[k:j + 1]), k
    return None, i


def _looks_like_definition(line, language):
    s = line.strip()
    if not s or s.startswith(("}", "//", "/*", "*", "#include", "#define")) or _NOT_A_HEAD.match(s):
        return False
    if _KEYWORD_RES[language].match(line):
        return True
    if language in ("javascript", "typescript"):
        return bool(_JS_METHOD.match(line))
    if language in ("c", "cpp", "java", "csharp"):
        return bool(_C_HEAD.match(line)) and "=" not in s.split("(")[0]
    return False


def _scan_braces(lines, start, max_lines):
    """The index of the line where the block opened at or after `start` closes;
    None when it does not within `max_lines`. Strings and comments are skipped."""
    depth, opened, in_block = 0, False, False
    for n in range(start, min(len(lines), start + max_lines)):
        line, i = lines[n], 0
        while i < len(line):
            c = line[i]
            if in_block:
                if line.startswith("*/", i):
                    in_block, i = False, i + 2
                    continue
                i += 1
                continue
            if line.startswith("//", i):
                break
            if line.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            if c in "\"`":
                end = i + 1
                while end < len(line) and line[end] != c:
                    end += 2 if line[end] == "\\" else 1
                i = end + 1
                continue
            if c == "'":
                close = line.find("'", i + 1)
                if 0 < close - i <= 3 or (close - i == 4 and line[i + 1] == "\\"):
                    i = close + 1
                    continue
            if c == "{":
                depth, opened = depth + 1, True
            elif c == "}":
                depth -= 1
                if opened and depth <= 0:
                    return n
            elif c == ";" and not opened and depth == 0 and n - start < 6:
                return n  # a declaration without a body
            i += 1
    return None


def brace_pairs(language, text, comment_style="slash"):
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not _looks_like_definition(lines[i], language):
            i += 1
            continue
        doc, _ = _doc_block_before(lines, i, language, comment_style)
        end = _scan_braces(lines, i, 400)
        if end is not None and any(_looks_like_definition(l, language) for l in lines[i + 1:end + 1]
                                   if "{" not in l and len(l) - len(l.lstrip()) <= len(lines[i]) - len(lines[i].lstrip())):
            end = None  # a declaration without a body, then the next definition
        if doc is None or end is None:
            i += 1
            continue
        code_lines = lines[i:end + 1]
        if len(code_lines) > MAX_CODE_LINES:
            code_lines = code_lines[:MAX_CODE_LINES]
        yield i + 1, doc, "\n".join(code_lines)
        # Nested definitions (methods of a documented class) are pairs too.
        i += 1


# ---- Ruby, Lua, Elixir: `end` closes what the line at the same indentation opened -------------

_END_STARTS = {
    "ruby": re.compile(r"^\s*(?:def|class|module)\s"),
    "lua": re.compile(r"^\s*(?:local\s+)?(?:function\s+[\w.:]+|[\w.]+\s*=\s*function)\s*\("),
    "elixir": re.compile(r"^\s*(?:def|defp|defmacro|defmodule)\s"),
}
_COMMENT = {"ruby": "#", "lua": "--", "elixir": "#"}


def end_pairs(language, text):
    lines = text.split("\n")
    marker = _COMMENT[language]
    for i, line in enumerate(lines):
        if not _END_STARTS[language].match(line):
            continue
        k = i
        while k - 1 >= 0 and lines[k - 1].strip().startswith(marker):
            k -= 1
        if k == i:
            continue
        doc = "\n".join(lines[k:i])
        indent = len(line) - len(line.lstrip())
        end = None
        for n in range(i + 1, min(len(lines), i + 400)):
            s = lines[n]
            if s.strip() and len(s) - len(s.lstrip()) <= indent:
                end = n if s.strip().startswith("end") else None
                break
        if end is None:
            continue
        yield i + 1, doc, "\n".join(lines[i:end + 1][:MAX_CODE_LINES])


# ---- Python: the ast knows where a docstring is ---------------------------------------------------

def python_pairs(text):
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return
    lines = text.split("\n")
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        doc = ast.get_docstring(node, clean=True)
        if not doc or not node.body or not hasattr(node, "end_lineno"):
            continue
        first = node.lineno - 1 - len(node.decorator_list) if node.decorator_list else node.lineno - 1
        first = min([d.lineno - 1 for d in node.decorator_list] + [node.lineno - 1])
        ds = node.body[0]
        code = lines[first:ds.lineno - 1] + lines[ds.end_lineno:node.end_lineno]
        yield node.lineno, doc, "\n".join(code[:MAX_CODE_LINES])


# ---- Haskell: Haddock comments above signatures, in sources recovered from HTML -------------------

_TAG = re.compile(r"<[^>]+>")
# Haddock's hover texts: each use of a name carries its type in a span the page hides.
_ANNOTATION = re.compile(r'<span class="annottext">[^<]*</span>')


def haddock_source(page):
    """The source text of a Haddock hyperlinked-source page."""
    start = page.find("<pre")
    if start < 0:
        return ""
    body = page[page.find(">", start) + 1:page.rfind("</pre>")]
    return html.unescape(_TAG.sub("", _ANNOTATION.sub("", body)))


def haskell_pairs(text):
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("-- |"):
            i += 1
            continue
        k = i
        while k + 1 < len(lines) and lines[k + 1].startswith("--"):
            k += 1
        doc = "\n".join(lines[i:k + 1])
        head = k + 1
        if head >= len(lines) or not re.match(r"^(?:[a-z_][\w']*\s*::|data\s|newtype\s|class\s|type\s|instance\s)", lines[head]):
            i = k + 1
            continue
        name = re.match(r"^([a-z_][\w']*)", lines[head])
        end = head + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t}" or
                                    (name and lines[end].startswith(name.group(1)))):
            if not lines[end].strip() and end + 1 < len(lines) and lines[end + 1] and lines[end + 1][0] not in " \t" \
                    and not (name and lines[end + 1].startswith(name.group(1))):
                break
            end += 1
        yield head + 1, doc, "\n".join(lines[head:end][:MAX_CODE_LINES]).rstrip()
        i = end
