"""A spec for each of the chapter's named scenarios (the runs a box makes for the
judge), small enough to run in a test, and the module each scenario's prefix belongs to."""

SPECS = {
    "scaler_training": {"seed": 5, "iterations": 3, "inject": {"1": "inf"}, "no_step": [2],
                        "scaler": {"init_scale": 128.0, "growth_interval": 1}},
    "scaler_scale_loss": {"dtype": "float16", "shape": [3], "value": 2.0, "backward": True,
                          "scaler": {"init_scale": 64.0}},
    "scaler_unscale": {"seed": 3, "dtype": "float32", "scaler": {"init_scale": 8.0}, "poison": "nan",
                       "poison_param": 1, "poison_index": 2, "groups": True},
    "scaler_misuse": {"cases": ["double_unscale", "fp16_gradients", "update_without_step"]},
    "scaler_state_round_trip": {"seed": 4, "before": 2, "after": 2, "inject": {"1": "inf"},
                                "scaler": {"init_scale": 64.0, "growth_interval": 2}},
    "scaler_fresh_state": {"cases": [{}, {"init_scale": 12.0, "growth_interval": 7}]},
    "scaler_step_arguments": {"scale": 4.0, "calls": [{}, {"closure": 2.0, "args": [1.0], "kwargs": {"a": 1.0}},
                                                     {"poison": True}]},
    "training_steps": {"seed": 3, "precision": "fp16", "microbatches": 2, "updates": 2,
                       "scaler": {"init_scale": 256.0}, "inject": {"1": {"microbatch": 0, "value": "inf"}}},
    "training_step_errors": {"seed": 3, "cases": ["unknown_precision", "weights_negative"]},
    "unscale_aliasing": {"seed": 3, "scale": 2.0},
}
OWNER = {"scaler": "loss_scaler", "training": "amp_training_step", "unscale": "amp_update"}
