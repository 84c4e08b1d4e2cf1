"""Hostile submissions more than one hostile test file grades."""

# amp_training_step with no implementation of its own: whatever it finds, it reports.
REPORTING_STEP = '''
import sys, os, gc
FOUND = []
{probe}
def train_step(model, optimizer, microbatches, loss_fn, *, precision, scaler=None, max_norm=1.0,
               weights=None):
    {use}
    raise RuntimeError("FOUND=" + repr(FOUND)[:1500])
'''


# Finds the judge's request and socket in its own frames, then answers itself.
FORGER = '''
import sys, json, struct, time, torch

def _forge(payload_for):
    frame = sys._getframe(1)
    while frame is not None:
        local = frame.f_locals
        if "request" in local and "sock" in local:
            request, sock = local["request"], local["sock"]
            body = payload_for(request.get("id"))
            sock.sendall(struct.pack(">I", len(body)) + body)
            time.sleep(60)
        frame = frame.f_back
    return None

def _deep(request_id):
    value = "[" * 200000 + "]" * 200000
    return ('{"id": "%s", "ok": true, "result": {"value": %s}}' % (request_id, value)).encode()

def _wide(request_id):
    value = "[" + ",".join(["[]"] * 1_000_000) + "]"
    return ('{"id": "%s", "ok": true, "result": {"value": %s}}' % (request_id, value)).encode()

def _huge_tensor(request_id):
    node = {"$tensor": "float32", "shape": [2**30, 2**30], "data": ""}
    return json.dumps({"id": request_id, "ok": True, "result": {"value": node}}).encode()

def unscale_gradients(scaled_gradients, scale):
    return _forge(_deep)

def global_grad_norm(gradients):
    return _forge(_wide)

def plan_mixed_precision_update(scaled_gradients, scale, max_norm, backoff_factor=0.5):
    return _forge(_huge_tensor)
'''

# GradScaler reached through names no static check spells, its private ops put back.
SUBCLASS_EVASION = '''
import torch, math, numbers, importlib

_mod = importlib.import_module("torch." + "amp." + "grad_" + "scaler")
_Base = getattr(_mod, "Grad" + "Scaler")
for _name in dir(torch._C._VariableFunctions):  # put the private ops back where a check looks
    if _name.startswith("_" + "amp_"):
        setattr(torch, _name, getattr(torch._C._VariableFunctions, _name))

def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    if found_inf:
        return scale * backoff_factor, 0
    growth_tracker += 1
    if growth_tracker == growth_interval:
        return scale * growth_factor, 0
    return scale, growth_tracker

class LossScaler(_Base):
    def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval)
'''
