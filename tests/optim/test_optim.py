"""Optimizers against PyTorch's update formulas written out in numpy (and against torch
itself where it is installed), param groups, schedulers, state dicts and bad input."""
import numpy as np
import pytest

from adcompile import Parameter
from adcompile.optim import SGD, Adagrad, Adam, AdamW, OptimizerError, RMSprop
from adcompile.optim.lr_scheduler import CosineAnnealingLR, ExponentialLR, StepLR

RNG = np.random.default_rng(0)
START = [RNG.normal(size=(3, 2)), RNG.normal(size=4)]
GRADS = [[RNG.normal(size=(3, 2)), RNG.normal(size=4)] for _ in range(4)]


def run(cls, steps=4, **options):
    params = [Parameter(a.copy()) for a in START]
    opt = cls(params, **options)
    opt.backend = "python"
    for k in range(steps):
        for p, g in zip(params, GRADS[k]):
            p.grad = g.copy()
        opt.step()
    return [p.data for p in params], opt


def sgd_reference(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    out = []
    for j, p in enumerate(START):
        p, buf = p.copy(), None
        for k in range(4):
            d = GRADS[k][j] + weight_decay * p
            if momentum:
                buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
                d = d + momentum * buf if nesterov else buf
            p = p - lr * d
        out.append(p)
    return out


def adam_reference(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, decoupled=False):
    b1, b2 = betas
    out = []
    for j, p in enumerate(START):
        p, m, v, vmax = p.copy(), 0.0, 0.0, 0.0
        for k in range(4):
            t = k + 1
            g = GRADS[k][j]
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            vmax = np.maximum(vmax, v)
            denom = np.sqrt(vmax if amsgrad else v) / np.sqrt(1 - b2 ** t) + eps
            p = p - lr / (1 - b1 ** t) * m / denom
        out.append(p)
    return out


SGD_CASES = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, dampening=0.3),
             dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.01)]
ADAM_CASES = [dict(lr=0.01), dict(lr=0.01, weight_decay=0.1), dict(lr=0.02, amsgrad=True, betas=(0.8, 0.9))]


@pytest.mark.parametrize("options", SGD_CASES)
def test_sgd_matches_pytorch_formula(options):
    params, _ = run(SGD, **options)
    for got, want in zip(params, sgd_reference(**options)):
        np.testing.assert_allclose(got, want, rtol=1e-13)


@pytest.mark.parametrize("options", ADAM_CASES)
def test_adam_and_adamw_match_pytorch_formula(options):
    params, _ = run(Adam, **options)
    for got, want in zip(params, adam_reference(**options)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    params, _ = run(AdamW, **{**options, "weight_decay": options.get("weight_decay", 0.01)})
    reference = adam_reference(**{**options, "weight_decay": options.get("weight_decay", 0.01)}, decoupled=True)
    for got, want in zip(params, reference):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_rmsprop_and_adagrad_match_pytorch_formula():
    params, _ = run(RMSprop, lr=0.01, alpha=0.9, momentum=0.5, centered=True)
    for j, start in enumerate(START):
        p, sq, avg_g, buf = start.copy(), 0.0, 0.0, 0.0
        for k in range(4):
            g = GRADS[k][j]
            sq = 0.9 * sq + 0.1 * g * g
            avg_g = 0.9 * avg_g + 0.1 * g
            buf = 0.5 * buf + g / (np.sqrt(sq - avg_g ** 2) + 1e-8)
            p = p - 0.01 * buf
        np.testing.assert_allclose(params[j], p, rtol=1e-12)
    params, _ = run(Adagrad, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)
    for j, start in enumerate(START):
        p, s = start.copy(), 0.1
        for k in range(4):
            g = GRADS[k][j]
            s = s + g * g
            p = p - 0.1 / (1 + k * 0.01) * g / (np.sqrt(s) + 1e-10)
        np.testing.assert_allclose(params[j], p, rtol=1e-12)


TORCH_CASES = [(SGD, "SGD", options) for options in SGD_CASES] + \
    [(Adam, "Adam", options) for options in ADAM_CASES] + \
    [(AdamW, "AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
     (RMSprop, "RMSprop", dict(lr=0.01, momentum=0.3, weight_decay=0.1)),
     (RMSprop, "RMSprop", dict(lr=0.01, centered=True)),
     (Adagrad, "Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1))]


@pytest.mark.parametrize("cls, torch_name, options", TORCH_CASES)
def test_optimizers_match_torch_where_installed(cls, torch_name, options):
    torch = pytest.importorskip("torch")
    params, _ = run(cls, **options)
    tensors = [torch.tensor(a.copy(), requires_grad=True) for a in START]
    opt = getattr(torch.optim, torch_name)(tensors, **options)
    for k in range(4):
        for t, g in zip(tensors, GRADS[k]):
            t.grad = torch.tensor(g)
        opt.step()
    for got, t in zip(params, tensors):
        np.testing.assert_allclose(got, t.detach().numpy(), rtol=1e-10, atol=1e-14)


def test_param_groups_have_their_own_learning_rates_and_skip_missing_grads():
    a, b = Parameter(np.ones(2)), Parameter(np.ones(2))
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    opt.backend = "python"
    a.grad, b.grad = np.ones(2), np.ones(2)
    opt.step()
    np.testing.assert_allclose(a.data, 0.9)
    np.testing.assert_allclose(b.data, 0.5)
    b.grad = None
    opt.step()
    np.testing.assert_allclose(a.data, 0.8)
    np.testing.assert_allclose(b.data, 0.5)


def test_schedulers_follow_pytorch_closed_forms():
    p = Parameter(np.ones(1))
    for make, formula in [
            (lambda o: StepLR(o, step_size=2, gamma=0.5), lambda e: 0.1 * 0.5 ** (e // 2)),
            (lambda o: ExponentialLR(o, gamma=0.9), lambda e: 0.1 * 0.9 ** e),
            (lambda o: CosineAnnealingLR(o, T_max=5, eta_min=0.01),
             lambda e: 0.01 + 0.09 * (1 + np.cos(np.pi * e / 5)) / 2)]:
        opt = SGD([p], lr=0.1)
        scheduler = make(opt)
        for epoch in range(6):
            assert np.isclose(opt.param_groups[0]["lr"], formula(epoch))
            assert np.isclose(scheduler.get_last_lr()[0], formula(epoch))
            scheduler.step()


def test_state_dict_round_trip_and_file(tmp_path):
    params, opt = run(Adam, steps=2, lr=0.01)
    fresh_params = [Parameter(p.copy()) for p in params]
    fresh = Adam(fresh_params, lr=0.5)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.param_groups[0]["lr"] == 0.01
    state = opt.state[next(iter(opt.state))]
    assert state["step"][0] == 2.0
    opt.save(tmp_path / "opt.npz")
    other = Adam([Parameter(p.copy()) for p in params], lr=0.5)
    other.load(tmp_path / "opt.npz")
    for p_fresh, p_other in zip(fresh_params, other.param_groups[0]["params"]):
        for name in ("exp_avg", "exp_avg_sq", "step"):
            np.testing.assert_array_equal(fresh.state[p_fresh][name], other.state[p_other][name])
    assert other.param_groups[0]["betas"] == (0.9, 0.999)


def test_bad_input():
    with pytest.raises(OptimizerError, match="empty parameter list"):
        SGD([], lr=0.1)
    with pytest.raises(OptimizerError, match="empty parameter list"):
        Adam(iter([]))
    with pytest.raises(OptimizerError, match="only optimize adcompile.Parameters"):
        SGD([np.ones(2)], lr=0.1)
    with pytest.raises(OptimizerError, match="Nesterov"):
        SGD([Parameter(np.ones(2))], lr=0.1, nesterov=True)
    p = Parameter(np.ones(2))
    opt = SGD([p], lr=0.1)
    p.grad = np.ones(3)
    with pytest.raises(OptimizerError, match="shape"):
        opt.step()
    np.testing.assert_array_equal(p.data, 1.0)  # nothing half-updated
    _, saved = run(Adam, steps=1, lr=0.01)
    with pytest.raises(OptimizerError, match="parameter groups"):
        SGD([{"params": [Parameter(np.ones(1))]}, {"params": [Parameter(np.ones(1))]}]).load_state_dict(
            saved.state_dict())
