"""The message catalogs: every id the grader can show has a Chinese translation
with the same placeholders, and the catalogs hold nothing the code no longer uses."""
import pytest

from autograder import catalog_tools, i18n


@pytest.fixture(scope="module")
def found():
    return catalog_tools.extract()


@pytest.fixture(scope="module")
def zh_catalog():
    table = {}
    for path in sorted((catalog_tools.LOCALE_DIR / "zh").glob("*.po")):
        for message in catalog_tools.read_catalog(path):
            if message.id:
                assert message.id not in table, f"{message.id!r} is in two catalog files"
                table[message.id] = (path.name, message.string, message.fuzzy)
    return table


def test_every_message_has_a_translation(found, zh_catalog):
    missing = [f"{where}: {msgid}" for msgid, (_area, where) in found.items()
               if not zh_catalog.get(msgid, ("", "", False))[1] or zh_catalog[msgid][2]]
    assert not missing, ("untranslated (run python -m autograder.catalog_tools):\n" + "\n".join(missing[:40]))


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
