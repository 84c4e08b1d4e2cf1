"""A chapter the engine has never seen, written into a temporary folder as a course maintainer
writes one following docs/architecture.md ("Adding a chapter"): one module, ``clip_norm``, with
two TODOs (an L2 norm, a clip in place that uses it), visible and hidden suites that share a
checks module of the chapter's own (imported relatively), a test that builds on TODO 1
(``builds_on``), public tests with their conftest.py, a reference, a student README and one
labelled mistake per TODO and four honest authors. Its stubs and catalogs are left for the tools to
write.

Plain Python, no torch: a grade of it costs what the engine costs."""
import pathlib
import textwrap

NAME = "vector_clip"
MODULE = "clip_norm"
VISIBLE_POINTS, HIDDEN_POINTS = 4, 5
# Chinese for every message id of the chapter (what a translator writes into locale/zh/*.po).
CHINESE = {
    "Vector Clip": "向量裁剪",
    "l2_norm: the square root of the sum of squares": "l2_norm：平方和的平方根",
    "clip_: scale the list in place by min(1, max_norm / norm)": "clip_：把列表原地乘以 min(1, max_norm / norm)",
    "l2_norm({values}) should be {want}, got {got}.": "l2_norm({values}) 应为 {want}，实际得到 {got}。",
    "after clip_({values}, {max_norm}) the list should hold {want}, got {got}: scale it in place.":
        "clip_({values}, {max_norm}) 之后列表应为 {want}，实际为 {got}：请原地缩放。",
    "clip_ should return the factor it used, {want}, got {got}.": "clip_ 应返回所用的系数 {want}，实际得到 {got}。",
    "l2_norm: square every value, sum, then take the square root.": "l2_norm：每个值平方后求和，再开平方。",
    "clip_: multiply every value in place by min(1, max_norm / norm).": "clip_：把每个值原地乘以 min(1, max_norm / norm)。",
    "l2_norm([3, 4]) is 5": "l2_norm([3, 4]) 等于 5",
    "clip_([3, 4], 1) scales the list in place to norm 1": "clip_([3, 4], 1) 把列表原地缩放到范数 1",
    "l2_norm of random values": "随机数值的 l2_norm",
    "clip_ of random values above max_norm": "范数大于 max_norm 的随机数值的 clip_",
    "clip_ leaves a list within max_norm as it is": "范数不超过 max_norm 的列表保持不变",
}

FILES = {
    "__init__.py": '''\
        """Vector Clip: a chapter of the course (its description is description.py)."""
        ''',
    "description.py": '''\
        """Vector Clip, declared for the engine."""
        from autograder.authoring import _

        TITLE = _("Vector Clip")
        MODULES = ("clip_norm",)
        TODOS = {
            "clip_norm": {
                1: _("l2_norm: the square root of the sum of squares"),
                2: _("clip_: scale the list in place by min(1, max_norm / norm)"),
            },
        }
        BUILDS_ON = {2: (1,)}
        HIDDEN_POINTS = {"clip_norm": 5}
        ''',
    "README.md": '''\
        # 向量裁剪 · Vector Clip

        在 `exercises/clip_norm.py` 中完成 TODO 1 和 TODO 2，然后运行 `python -m autograder grade`。

        Fill in TODO 1 and TODO 2 of `exercises/clip_norm.py`, then run `python -m autograder grade`.
        ''',
    "checks.py": '''\
        """Checks shared by the visible and the hidden suite (each imports it as ``from .. import checks``)."""
        import math

        from autograder.authoring import _, expect, value_of

        FILE = "clip_norm.py"


        def norm_of(values):
            return math.sqrt(math.fsum(value * value for value in values))


        def close(got, want):
            return isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


        def check_norm(student, values):
            got = value_of(student.call("l2_norm", list(values)), FILE)
            want = norm_of(values)
            expect(close(got, want), _("l2_norm({values}) should be {want}, got {got}.", values=repr(values),
                                       want=repr(want), got=repr(got)))


        def check_clip(student, values, max_norm):
            outcome = student.call_watching_inputs("clip_", list(values), max_norm)
            factor = value_of(outcome, FILE)
            want_factor = min(1.0, max_norm / (norm_of(values) + 1e-12))
            want = [value * want_factor for value in values]
            after = outcome.args_after[0]
            expect(isinstance(after, list) and len(after) == len(want) and all(map(close, after, want)),
                   _("after clip_({values}, {max_norm}) the list should hold {want}, got {got}: scale it in place.",
                     values=repr(values), max_norm=repr(max_norm), want=repr(want), got=repr(after)))
            expect(close(factor, want_factor), _("clip_ should return the factor it used, {want}, got {got}.",
                                                 want=repr(want_factor), got=repr(factor)))
        ''',
    "visible/test_visible_clip_norm.py": '''\
        """Visible tests of clip_norm (TODO 1-2): fixed inputs."""
        import pytest

        from autograder.authoring import _, builds_on

        from .. import checks

        pytestmark = [pytest.mark.module("clip_norm"), pytest.mark.visibility("visible")]


        @pytest.mark.points(2)
        @pytest.mark.todo(1)
        @pytest.mark.hint(_("l2_norm: square every value, sum, then take the square root."))
        def test_norm(student):
            """l2_norm([3, 4]) is 5"""
            checks.check_norm(student, [3.0, 4.0])


        @pytest.mark.points(2)
        @pytest.mark.todo(2)
        @pytest.mark.hint(_("clip_: multiply every value in place by min(1, max_norm / norm)."))
        def test_clip(student):
            """clip_([3, 4], 1) scales the list in place to norm 1"""
            values = [3.0, 4.0]
            with builds_on(1, lambda: checks.check_norm(student, values)):
                checks.check_clip(student, values, 1.0)
        ''',
    "hidden/test_hidden_clip_norm.py": '''\
        """Hidden tests of clip_norm (TODO 1-2): values drawn from the test's seed."""
        import random

        import pytest

        from autograder.authoring import _, builds_on

        from .. import checks

        pytestmark = [pytest.mark.module("clip_norm"), pytest.mark.visibility("hidden")]


        def draw(seed, size=6):
            rng = random.Random(seed)
            return [rng.uniform(-50.0, 50.0) for _ in range(size)]


        def check_clip(student, seed, times):
            """clip_ of random values to ``times`` their norm (it uses l2_norm: TODO 1)."""
            values = draw(seed)
            with builds_on(1, lambda: checks.check_norm(student, values)):
                checks.check_clip(student, values, checks.norm_of(values) * times)


        @pytest.mark.points(2)
        @pytest.mark.todo(1)
        @pytest.mark.hint(_("l2_norm: square every value, sum, then take the square root."))
        def test_norm_random(student, seed):
            """l2_norm of random values"""
            checks.check_norm(student, draw(seed))


        @pytest.mark.points(2)
        @pytest.mark.todo(2)
        @pytest.mark.hint(_("clip_: multiply every value in place by min(1, max_norm / norm)."))
        def test_clip_random(student, seed):
            """clip_ of random values above max_norm"""
            check_clip(student, seed, 1 / 3)


        @pytest.mark.points(1)
        @pytest.mark.todo(2)
        @pytest.mark.hint(_("clip_: multiply every value in place by min(1, max_norm / norm)."))
        def test_clip_short(student, seed):
            """clip_ leaves a list within max_norm as it is"""
            check_clip(student, seed, 2)
        ''',
    "solutions/clip_norm.py": '''\
        """Clip a list of numbers by its L2 norm."""
        import math


        def l2_norm(values):
            """The L2 norm of ``values`` (a list of numbers), as a float."""
            # >>> TODO 1: the square root of the sum of squares
            return math.sqrt(sum(value * value for value in values))
            # <<< TODO 1


        def clip_(values, max_norm):
            """Scale ``values`` in place so that its L2 norm is at most ``max_norm``; return the factor used."""
            if max_norm <= 0:
                raise ValueError("max_norm must be positive")
            # >>> TODO 2: multiply every value in place by min(1, max_norm / l2_norm(values))
            factor = min(1.0, max_norm / (l2_norm(values) + 1e-12))
            for index, value in enumerate(values):
                values[index] = value * factor
            return factor
            # <<< TODO 2
        ''',
    "solutions/mutants_clip_norm.py": '''\
        """Single-mistake submissions of clip_norm.py: (name, TODO holding the mistake, [(old, new)])."""
        CASES = [
            ("norm_without_sqrt", 1, [("return math.sqrt(sum(value * value for value in values))",
                                       "return sum(value * value for value in values)")]),
            ("clip_returns_a_copy", 2, [("    for index, value in enumerate(values):\\n"
                                         "        values[index] = value * factor\\n", "")]),
        ]
        ''',
    "exercises/tests/conftest.py": '''\
        """The public tests import the module being written from exercises/ (pytest runs them from the
        repository's root, where exercises/ is not on the path)."""
        import pathlib
        import sys

        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
        ''',
    "exercises/tests/test_clip_norm.py": '''\
        """Public tests of clip_norm.py (TODO 1-2). Run: pytest exercises/tests"""
        import clip_norm


        def test_norm():
            assert abs(clip_norm.l2_norm([3.0, 4.0]) - 5.0) < 1e-9, "TODO 1: l2_norm([3, 4]) should be 5"


        def test_clip_in_place():
            values = [3.0, 4.0]
            factor = clip_norm.clip_(values, 1.0)
            assert abs(factor - 0.2) < 1e-9, "TODO 2: clip_ should return the factor 0.2"
            assert abs(values[0] - 0.6) < 1e-9 and abs(values[1] - 0.8) < 1e-9, "TODO 2: scale the list in place"
        ''',
}

# Independent correct solutions for the similarity check's calibration: author -> {TODO: code}, each
# written as solutions/honest/<author>.py (tests/support/honest.py's FILLS).
HONEST = {
    "ada": {1: "return math.sqrt(sum(v * v for v in values))",
            2: "factor = min(1.0, max_norm / (l2_norm(values) + 1e-12))\nfor i in range(len(values)):\n"
               "    values[i] *= factor\nreturn factor"},
    "bo": {1: "total = 0.0\nfor x in values:\n    total += x ** 2\nreturn total ** 0.5",
           2: "norm = l2_norm(values)\nscale = 1.0 if norm <= max_norm else max_norm / norm\n"
              "values[:] = [x * scale for x in values]\nreturn scale"},
    "cy": {1: "return math.hypot(*values) if values else 0.0",
           2: "n = l2_norm(values) + 1e-12\nc = max_norm / n\nif c > 1:\n    c = 1.0\n"
              "for index, value in enumerate(values):\n    values[index] = c * value\nreturn c"},
    "dee": {1: "return float(sum(map(lambda v: v * v, values))) ** 0.5",
            2: "coef = min(1.0, max_norm / (l2_norm(values) + 1e-12))\nk = 0\nwhile k < len(values):\n"
               "    values[k] = values[k] * coef\n    k += 1\nreturn coef"},
}


def write(parent):
    """The chapter's package folder, ``parent/vector_clip``, with every file above."""
    folder = pathlib.Path(parent) / NAME
    for relative, text in FILES.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    (folder / "solutions" / "honest").mkdir()
    for author, fills in HONEST.items():
        (folder / "solutions" / "honest" / f"{author}.py").write_text(f"FILLS = {fills!r}\n", encoding="utf-8")
    return folder


def translate(folder):
    """Fill the Chinese of every id the catalog tool wrote into the chapter's catalogs (as its
    translator would); returns the ids left without one."""
    from autograder.i18n import catalog_tools

    left = []
    for path in sorted((pathlib.Path(folder) / "locale" / "zh").glob("*.po")):
        catalog = catalog_tools.read_catalog(path)
        for message in catalog:
            if message.id and not message.string:
                message.string = CHINESE.get(message.id, "")
                if not message.string:
                    left.append(message.id)
        catalog_tools.write_catalog(path, catalog)
    return left


DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
EXAMPLE = "chapters/vector_clip"   # where the page's commands have the chapter
EXAMPLE_OUTPUT = "/tmp/"           # where they write what is not the chapter's


def commands(text=None):
    """``{name: command}`` of the page's ``<!-- chapter-command: NAME -->`` blocks ("Adding a chapter")."""
    import re

    text = DOC.read_text(encoding="utf-8") if text is None else text
    return {name: textwrap.dedent(block).strip() for name, block in
            re.findall(r"^[ \t]*<!-- chapter-command: ([\w-]+) -->\n[ \t]*```bash\n(.*?)^[ \t]*```", text,
                       flags=re.M | re.S)}


def command(name, chapter, output):
    """The page's command ``name`` for the chapter in ``chapter``, writing into ``output``."""
    return commands()[name].replace(EXAMPLE_OUTPUT, f"{output}/").replace(EXAMPLE, str(chapter))
