"""The message catalogs: every id the grader can show has a Chinese translation
with the same placeholders, and the catalogs hold nothing the code no longer uses;
the translations use the chapter's terms (docs/i18n.md's glossary); placeholders
that take a clause get one.

The engine's catalogs are checked with every chapter of the repository (and the active one),
each chapter's own with the engine's, whichever chapter the run has active."""
import ast
import re

import pytest

from autograder import active_assignment
from autograder.i18n import catalog_tools
from autograder import i18n
from support import chapters
from support.helpers import ROOT
from support.language_check import english_runs

CHAPTERS = chapters.found()


@pytest.fixture(scope="module", params=sorted(CHAPTERS))
def chapter(request):
    return CHAPTERS[request.param]


@pytest.fixture(scope="module")
def found(chapter):
    return catalog_tools.extract(chapter)


def catalog_table(chapter):
    """msgid -> (file name, translation, fuzzy) of the engine's catalogs and ``chapter``'s."""
    table = {}
    for path in catalog_tools.catalog_files("zh", chapter):
        for message in catalog_tools.read_catalog(path):
            if message.id:
                assert message.id not in table, f"{message.id!r} is in two catalog files"
                table[message.id] = (path.name, message.string, message.fuzzy)
    return table


@pytest.fixture(scope="module")
def zh_catalog(chapter):
    return catalog_table(chapter)


def test_every_chapter_is_checked():
    assert {"autograder.assignment", "tests.toy_assignment"} <= set(CHAPTERS)


@pytest.mark.slow
def test_every_message_has_a_translation(found, zh_catalog):
    missing = [f"{where}: {msgid}" for msgid, (_area, where) in found.items()
               if not zh_catalog.get(msgid, ("", "", False))[1] or zh_catalog[msgid][2]]
    assert not missing, ("untranslated (run python -m autograder.i18n.catalog_tools):\n" + "\n".join(missing[:40]))


def test_placeholders_match(zh_catalog):
    wrong = [f"{name}: {msgid!r}" for msgid, (name, translation, _fuzzy) in zh_catalog.items()
             if translation and i18n.placeholders(msgid) != i18n.placeholders(translation)]
    assert not wrong, "placeholders differ between English and Chinese:\n" + "\n".join(wrong)


def test_catalogs_hold_only_used_ids(found, zh_catalog):
    stale = sorted(set(zh_catalog) - set(found))
    assert not stale, "ids no longer in the code (remove them):\n" + "\n".join(stale[:40])


def test_messages_render_in_both_languages():
    message = i18n.Message("{what} should be a torch.Tensor, got {got}.", what="x", got="int")
    assert message.render("en") == "x should be a torch.Tensor, got int."
    chinese = message.render("zh")
    assert chinese != message.render("en") and "x" in chinese and "int" in chinese


def test_a_broken_translation_falls_back_to_english(monkeypatch):
    monkeypatch.setitem(i18n.catalog("zh"), "Passed. {x}", "通过 {y}")
    assert i18n.Message("Passed. {x}", x=1).render("zh") == "Passed. 1"


@pytest.mark.parametrize("option, env, setting, expected", [
    ("en", "zh", "zh", "en"), (None, "zh", "en", "zh"), (None, None, "zh", "zh"), (None, None, None, "en"),
    ("zh_CN", None, None, "zh"), (None, "klingon", "en", "en"),
])
def test_language_choice(tmp_path, option, env, setting, expected):
    if setting:
        (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.autograder]\nlang = "{setting}"\n')
    environ = {i18n.ENV_VAR: env} if env else {}
    assert i18n.resolve_language(option, environ, str(tmp_path)) == expected


# --------------------------------------------------------------------------- the chapter's terms

DOCS = ROOT / "docs" / "i18n.md"
# Code inside a message id is not prose: backtick spans, calls, dotted names, identifiers
# with underscores, quoted values and placeholders.
CODE = re.compile(r"`[^`]*`|[\w.]*\w\([^()]*\)|\w+(?:\.\w+)+|\w*_\w*|'[^']*'|\{[^}]*\}")


def glossary():
    """[(English alternatives, Chinese alternatives)] from the table in docs/i18n.md."""
    text = DOCS.read_text(encoding="utf-8")
    table = text[text.index("<!-- glossary:start -->"):text.index("<!-- glossary:end -->")]
    rows = []
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] and not set(cells[0]) <= set("-") and not cells[0].startswith("English"):
            rows.append(([word.strip() for word in cells[0].split("/")], [word.strip() for word in cells[1].split("/")]))
    return rows


def glossary_problems(rows, catalog):
    """What breaks the glossary in ``catalog`` ({msgid: translation})."""
    problems = []
    for english, chinese in rows:
        words = re.compile(r"\b(" + "|".join(map(re.escape, english)) + r")\b", re.I)
        for msgid, translation in catalog.items():
            if words.search(CODE.sub(" ", msgid)) and not any(term in translation for term in chinese):
                problems.append(f"{english[0]} -> {chinese}: {msgid!r} is translated {translation!r}")
        if not any(term in translation for translation in catalog.values() for term in chinese):
            problems.append(f"{chinese[0]} ({english[0]}) appears in no translation")
    return problems


@pytest.fixture(scope="module")
def graded_catalog():
    """The grader's translations with this repository's chapter, whose terms the glossary holds
    (the GPU lab has its own vocabulary)."""
    table = catalog_table(active_assignment.load(active_assignment.DEFAULT_PACKAGE))
    return {msgid: string for msgid, (name, string, _fuzzy) in table.items() if string and name != "lab.po"}


@pytest.mark.slow
def test_glossary_terms_are_the_ones_the_catalogs_use(graded_catalog):
    rows = glossary()
    assert len(rows) >= 15 and any("损失缩放" in chinese for _english, chinese in rows)
    problems = glossary_problems(rows, graded_catalog)
    assert not problems, "\n".join(problems[:40])


def test_the_glossary_check_can_fail():
    rows = [(["loss scaling"], ["损失缩放"]), (["clip", "clipping"], ["裁剪"])]
    catalog = {"dynamic loss scaling: grow the scale": "动态缩放：增大 scale",
               "call clip_grad_norm_ after unscale_": "在 unscale_ 之后调用 clip_grad_norm_"}
    problems = glossary_problems(rows, catalog)
    assert any("dynamic loss scaling" in problem for problem in problems)
    assert any("裁剪 (clip) appears in no translation" in problem for problem in problems)
    assert not any("clip_grad_norm_ after" in problem for problem in problems), "code is not prose"


# --------------------------------------------------------------------------- placeholders that take a clause

CLAUSE_PLACEHOLDERS = {"outcome"}
CLAUSE_BUILDERS = {"raised_instead", "_"}
MESSAGE_BUILDERS = {"_", "describe_raised", "raised_instead"}   # return a translated message (or may)
NOUN_SLOT = re.compile(r"(得到|实际为|实际是|应为|返回了?)\s*$")


def message_calls():
    """(file:line, msgid, {keyword: value node}) of every _()/t() call with a literal id in the grader."""
    for path in sorted(catalog_tools.PACKAGE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "t") \
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                yield (f"{path.relative_to(catalog_tools.PACKAGE_DIR)}:{node.lineno}", node.args[0].value,
                       {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg})


def _builds_message(node):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MESSAGE_BUILDERS


def _raw(node):
    """A branch that pastes a plain value (an empty string adds nothing: allowed)."""
    return not _builds_message(node) and not (isinstance(node, ast.Constant) and node.value in ("", None))


def mixed_branches(node):
    """True when ``node`` gives a translated message on one branch and a raw value on another."""
    branches = node.values if isinstance(node, ast.BoolOp) else [node.body, node.orelse] \
        if isinstance(node, ast.IfExp) else []
    return any(map(_builds_message, branches)) and any(map(_raw, branches))


def clause_problems(calls):
    problems = []
    for where, msgid, keywords in calls:
        for name, value in keywords.items():
            if mixed_branches(value):
                problems.append(f"{where}: {name}= mixes a translated message and a raw value: {ast.unparse(value)}")
            if name in CLAUSE_PLACEHOLDERS and not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                                                    and value.func.id in CLAUSE_BUILDERS):
                problems.append(f"{where}: {{{name}}} takes a clause (judge.raised_instead), got {ast.unparse(value)}")
    return problems


@pytest.mark.slow
def test_placeholders_that_take_a_clause_get_one():
    calls = list(message_calls())
    assert any("{outcome}" in msgid for _where, msgid, _kw in calls)
    problems = clause_problems(calls)
    assert not problems, "\n".join(problems)


def test_the_clause_check_can_fail():
    tree = ast.parse('_("x should raise, got {raised}.", raised=raised or _("no exception"))\n'
                     '_("x should raise, but {outcome}.", outcome=name)\n'
                     '_("{a}{b}", a=_("one") if ok else "", b=", ".join(names) or "-")\n')
    calls = sorted((f"line {node.lineno}", node.args[0].value, {k.arg: k.value for k in node.keywords})
                   for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                   and node.keywords)
    problems = clause_problems(calls)
    assert len(problems) == 2 and "line 1" in problems[0] and "line 2" in problems[1], problems
    # and in a translation: a clause after a word that expects a value
    assert NOUN_SLOT.search("update_scale 应抛出 ValueError，实际得到 ") and not NOUN_SLOT.search("应抛出 ValueError，但")


def typical_values(msgid):
    """Each placeholder of ``msgid`` with a value of the kind the code passes."""
    from autograder.judging.judge import raised_instead

    values = {}
    for name, spec in i18n.placeholders(msgid):
        if name in CLAUSE_PLACEHOLDERS:
            values[name] = [raised_instead(None), raised_instead("TypeError: bad value")]
        elif spec:
            values[name] = [1234.5 if not spec.endswith("d") else 7]
        else:
            values[name] = [f"<{name}>"]
    return values


@pytest.mark.slow
def test_every_message_renders_in_both_languages_with_typical_values(chapter, zh_catalog, monkeypatch):
    monkeypatch.setenv(active_assignment.ENV_VAR, chapter.package)  # the catalogs a grade of it reads
    problems = []
    for msgid, (_name, translation, _fuzzy) in zh_catalog.items():
        values = typical_values(msgid)
        variants = max((len(options) for options in values.values()), default=1)
        for index in range(variants):
            params = {name: options[min(index, len(options) - 1)] for name, options in values.items()}
            english, chinese = i18n.Message(msgid, **params).render("en"), i18n.Message(msgid, **params).render("zh")
            if english_runs(chinese):
                problems.append(f"{msgid!r} keeps English words in a Chinese run: {english_runs(chinese)}")
            if not english or "{" in english.replace("{{", ""):
                problems.append(f"{msgid!r} does not render in English: {english!r}")
            for name in CLAUSE_PLACEHOLDERS & set(params):
                clause = i18n.render(params[name], "zh")
                before = chinese[:chinese.index(clause)] if clause in chinese else ""
                if NOUN_SLOT.search(before):
                    problems.append(f"{msgid!r}: the clause {{{name}}} follows a word that expects a value: {chinese}")
    assert not problems, "\n".join(problems[:40])


# --------------------------------------------------------------------------- what extraction says

def test_no_message_is_an_f_string(chapter):
    """A message that is an f-string cannot be translated (Babel skips it with a warning that
    catalog_tools does not print: it cannot tell it from a placeholder's f-string value)."""
    found = [f"{path}:{line}" for path in catalog_tools._python_files(chapter)
             for line in catalog_tools.fstring_messages(path)]
    assert not found, "messages written as f-strings (use _(\"... {name}\", name=...)):\n" + "\n".join(found)


def test_extraction_finds_f_string_messages_and_prints_nothing(tmp_path, capfd):
    source = tmp_path / "pages.py"
    source.write_text('count = 3\nt("Full marks = {points} points.", "en", points=f"{count:g}")\n'
                      '_(f"{count} students")\nt(f"plain {{braces}}", "en")\n', encoding="utf-8")
    ids = [msgid for _line, msgid in catalog_tools._ids_of(source)]
    assert ids == ["Full marks = {points} points.", "plain {braces}"]
    assert catalog_tools.fstring_messages(source) == [3]
    assert capfd.readouterr() == ("", "")
