"""What the similarity check's two test files build their classes from: the chapter's
modules, the independent variants of tests/variants/, files of the repository, and a
folder name and code written to break out of the pages."""
from support.helpers import ROOT

MODULES = ("amp_update", "loss_scaler", "amp_training_step")
VARIANTS = {"amp_update": "amp_update_foreach", "loss_scaler": "loss_scaler_tensor",
            "amp_training_step": "amp_training_step_alt"}
HOSTILE = "<img src=x onerror=alert(1)>"
HOSTILE_CODE = ('SCRIPT = "</pre><script>alert(document.cookie)</script>"\n'
                "access = 'user' # \u202e \u2066 admin \u2069 \u2066\n")


def write_module(folder, module, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(text, encoding="utf-8")


def read_file(*parts):
    return ROOT.joinpath(*parts).read_text(encoding="utf-8")


def variant(module):
    return read_file("tests", "variants", f"{VARIANTS[module]}.py")
