"""The learning-rate schedulers against the formulas of PyTorch's documentation (written out
here), against ``torch.optim.lr_scheduler`` number for number where torch is installed, and
their state dicts (a resumed schedule equals the continuous one)."""
import math
from bisect import bisect_right

import numpy as np
import pytest

import adcompile
from adcompile.optim import lr_scheduler
from adcompile.optim.lr_scheduler import SchedulerError

BASE_LRS = (0.1, 0.03)


def sgd(momentum=0.9, lrs=BASE_LRS):
    groups = [{"params": [adcompile.Parameter(np.zeros(2))], "lr": lr} for lr in lrs]
    return adcompile.optim.SGD(groups, lr=lrs[0], momentum=momentum)


def adam(lrs=BASE_LRS):
    groups = [{"params": [adcompile.Parameter(np.zeros(2))], "lr": lr} for lr in lrs]
    return adcompile.optim.Adam(groups, lr=lrs[0])


def rates(scheduler, steps):
    """The rates of each epoch: before the first step, then after each step."""
    seen = [scheduler.get_last_lr()]
    for _ in range(steps):
        scheduler.step()
        seen.append(scheduler.get_last_lr())
    return np.array(seen)


def expected(formula, steps, lrs=BASE_LRS):
    return np.array([[formula(base, epoch) for base in lrs] for epoch in range(steps + 1)])


# ------------------------------------------------------------------ the documented formulas
def one_cycle_formula(max_lr, total, pct_start=0.3, div_factor=25.0, final_div_factor=1e4, strategy="cos"):
    """PyTorch's 1cycle: anneal initial -> max over pct_start * total - 1 steps, then max -> min."""
    initial = max_lr / div_factor
    low = initial / final_div_factor
    up_end = pct_start * total - 1

    def anneal(start, end, pct):
        if strategy == "cos":
            return end + (start - end) / 2 * (1 + math.cos(math.pi * pct))
        return start + (end - start) * pct

    def lr(epoch):
        if epoch <= up_end:
            return anneal(initial, max_lr, epoch / up_end)
        return anneal(max_lr, low, (epoch - up_end) / (total - 1 - up_end))
    return lr


FORMULAS = {
    "StepLR": (lambda opt: lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
               lambda base, e: base * 0.5 ** (e // 3)),
    "MultiStepLR": (lambda opt: lr_scheduler.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.5),
                    lambda base, e: base * 0.5 ** bisect_right([2, 5, 5], e)),
    "ExponentialLR": (lambda opt: lr_scheduler.ExponentialLR(opt, gamma=0.8), lambda base, e: base * 0.8 ** e),
    "CosineAnnealingLR": (lambda opt: lr_scheduler.CosineAnnealingLR(opt, T_max=5, eta_min=0.001),
                          lambda base, e: 0.001 + (base - 0.001) * (1 + math.cos(math.pi * e / 5)) / 2),
    "LambdaLR": (lambda opt: lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (1 + e)), lambda base, e: base / (1 + e)),
    "MultiplicativeLR": (lambda opt: lr_scheduler.MultiplicativeLR(opt, lambda e: 0.9 if e % 2 else 0.5),
                         lambda base, e: base * math.prod(0.9 if i % 2 else 0.5 for i in range(1, e + 1))),
    "LinearLR": (lambda opt: lr_scheduler.LinearLR(opt, start_factor=0.2, end_factor=0.9, total_iters=4),
                 lambda base, e: base * (0.2 + (0.9 - 0.2) * min(4, e) / 4)),
}


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_schedule_follows_the_documented_formula(name):
    build, formula = FORMULAS[name]
    np.testing.assert_allclose(rates(build(sgd()), 12), expected(formula, 12), rtol=1e-12)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_one_cycle_follows_the_documented_formula(strategy):
    total = 20
    scheduler = lr_scheduler.OneCycleLR(sgd(), max_lr=[1.0, 0.4], total_steps=total, anneal_strategy=strategy)
    got = rates(scheduler, total - 1)
    want = np.array([[one_cycle_formula(top, total, strategy=strategy)(e) for top in (1.0, 0.4)]
                     for e in range(total)])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[0, 0] == pytest.approx(1.0 / 25) and got[-1, 0] == pytest.approx(1.0 / 25 / 1e4)
    with pytest.raises(SchedulerError, match="past its total_steps=20"):
        scheduler.step(), scheduler.step()


def test_one_cycle_three_phase_and_momentum():
    opt = sgd()
    scheduler = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=20, three_phase=True, anneal_strategy="linear")
    got, momenta = [], []
    for _ in range(20):
        got.append(scheduler.get_last_lr()[0])
        momenta.append(opt.param_groups[0]["momentum"])
        scheduler.step()
    # up 0.04 -> 1 over steps 0..5, back down to 0.04 at step 10, then to 0.04 / 1e4 at step 19
    assert got[0] == pytest.approx(0.04) and got[5] == pytest.approx(1.0) and got[10] == pytest.approx(0.04)
    assert got[19] == pytest.approx(0.04 / 1e4)
    assert [momenta[0], momenta[5], momenta[10]] == pytest.approx([0.95, 0.85, 0.95])
    beta_opt = adam()
    lr_scheduler.OneCycleLR(beta_opt, max_lr=1.0, total_steps=10)
    assert beta_opt.param_groups[0]["betas"] == (0.95, 0.999)


def test_reduce_on_plateau_by_hand():
    opt = sgd(lrs=(1.0,))
    scheduler = lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1, min_lr=0.2)
    seen = []
    for metric in [5.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]:
        scheduler.step(metric)
        seen.append(scheduler.get_last_lr()[0])
    # two bad epochs (4.0 is no improvement on 4.0): halve; one cooldown epoch; two bad ones: halve;
    # then 0.25 -> 0.2 (min_lr), and no further change
    assert seen == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.2]
    maximize = lr_scheduler.ReduceLROnPlateau(sgd(lrs=(1.0,)), mode="max", patience=0, threshold=0.5,
                                              threshold_mode="abs")
    maximize.step(1.0), maximize.step(1.4)  # not better than 1.0 + 0.5
    assert maximize.get_last_lr() == [pytest.approx(0.1)]


def test_sequential_switches_at_the_milestones():
    opt = sgd()
    warmup = lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=3)
    decay = lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    got = rates(lr_scheduler.SequentialLR(opt, [warmup, decay], milestones=[3]), 8)
    want = expected(lambda base, e: base * (0.5 + 0.5 * e / 3) if e < 3 else base * 0.1 ** ((e - 3) // 2), 8)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_bad_scheduler_arguments():
    with pytest.raises(SchedulerError, match="give total_steps, or epochs and steps_per_epoch"):
        lr_scheduler.OneCycleLR(sgd(), max_lr=1.0)
    with pytest.raises(SchedulerError, match="has no momentum or betas"):
        lr_scheduler.OneCycleLR(adcompile.optim.Adagrad([adcompile.Parameter(np.zeros(1))]), max_lr=1.0, total_steps=5)
    with pytest.raises(SchedulerError, match="one value per parameter group: 3 values for 2"):
        lr_scheduler.LambdaLR(sgd(), [abs, abs, abs])
    with pytest.raises(SchedulerError, match="factor must be < 1.0"):
        lr_scheduler.ReduceLROnPlateau(sgd(), factor=2.0)
    with pytest.raises(SchedulerError, match="one milestone fewer"):
        opt = sgd()
        lr_scheduler.SequentialLR(opt, [lr_scheduler.ExponentialLR(opt, 0.5)], milestones=[2])
    with pytest.raises(SchedulerError, match="needs an adcompile.optim optimizer"):
        lr_scheduler.StepLR(object(), step_size=1)


# ------------------------------------------------------------------ state dicts
class Halving:
    """A callable object: its attributes are part of the scheduler's state dict."""

    def __init__(self):
        self.factor = 0.5

    def __call__(self, epoch):
        return self.factor ** epoch


def resumable_schedulers(opt):
    return {
        "StepLR": lambda: lr_scheduler.StepLR(opt, step_size=2),
        "LambdaLR": lambda: lr_scheduler.LambdaLR(opt, Halving()),
        "OneCycleLR": lambda: lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=12),
        "SequentialLR": lambda: lr_scheduler.SequentialLR(
            opt, [lr_scheduler.LinearLR(opt, total_iters=2), lr_scheduler.CosineAnnealingLR(opt, T_max=4)], [3]),
    }


@pytest.mark.parametrize("name", ["StepLR", "LambdaLR", "OneCycleLR", "SequentialLR"])
def test_resumed_schedule_equals_the_continuous_one(name):
    opt = sgd()
    continuous = rates(resumable_schedulers(opt)[name](), 10)
    first_opt = sgd()
    first = resumable_schedulers(first_opt)[name]()
    head = rates(first, 4)
    saved_scheduler, saved_optimizer = first.state_dict(), first_opt.state_dict()
    if name == "LambdaLR":
        assert saved_scheduler["lr_lambdas"] == [{"factor": 0.5}, {"factor": 0.5}]
    second_opt = sgd()
    second = resumable_schedulers(second_opt)[name]()
    second_opt.load_state_dict(saved_optimizer)
    second.load_state_dict(saved_scheduler)
    tail = rates(second, 6)
    np.testing.assert_array_equal(np.concatenate([head, tail[1:]]), continuous)


def test_plateau_state_dict_round_trip():
    first = lr_scheduler.ReduceLROnPlateau(sgd(), patience=2)
    for metric in [3.0, 2.0, 2.5]:
        first.step(metric)
    second = lr_scheduler.ReduceLROnPlateau(sgd(), patience=2)
    second.load_state_dict(first.state_dict())
    assert (second.best, second.num_bad_epochs, second.last_epoch) == (2.0, 1, 3)


# ------------------------------------------------------------------ against torch itself
def torch_and_ours(make):
    """Run ``make(torch_module, optimizer)`` on a torch SGD and on ours with the same groups."""
    torch = pytest.importorskip("torch")
    torch_opt = torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(2))], "lr": lr} for lr in BASE_LRS],
                                lr=BASE_LRS[0], momentum=0.9)
    return make(torch.optim.lr_scheduler, torch_opt), make(lr_scheduler, sgd())


TORCH_CASES = {
    "StepLR": lambda m, opt: m.StepLR(opt, step_size=3, gamma=0.3),
    "MultiStepLR": lambda m, opt: m.MultiStepLR(opt, milestones=[2, 5, 5, 9], gamma=0.3),
    "ExponentialLR": lambda m, opt: m.ExponentialLR(opt, gamma=0.93),
    "CosineAnnealingLR": lambda m, opt: m.CosineAnnealingLR(opt, T_max=7, eta_min=0.002),
    "LambdaLR": lambda m, opt: m.LambdaLR(opt, [lambda e: 0.97 ** e, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, opt: m.MultiplicativeLR(opt, lambda e: 0.95),
    "LinearLR": lambda m, opt: m.LinearLR(opt, start_factor=0.1, end_factor=0.7, total_iters=9),
    "OneCycleLR cos": lambda m, opt: m.OneCycleLR(opt, max_lr=[0.9, 0.2], total_steps=25, pct_start=0.4),
    "OneCycleLR linear three-phase": lambda m, opt: m.OneCycleLR(
        opt, max_lr=0.5, epochs=5, steps_per_epoch=5, anneal_strategy="linear", three_phase=True, div_factor=10.0,
        final_div_factor=100.0, base_momentum=0.8, max_momentum=0.9),
    "SequentialLR": lambda m, opt: m.SequentialLR(
        opt, [m.LinearLR(opt, start_factor=0.25, total_iters=4), m.CosineAnnealingLR(opt, T_max=6),
              m.ExponentialLR(opt, gamma=0.9)], milestones=[4, 12]),
}


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_matches_torch_number_for_number(name):
    theirs, ours = torch_and_ours(TORCH_CASES[name])
    for epoch in range(25 if "OneCycle" in name else 20):
        assert ours.get_last_lr() == theirs.get_last_lr(), epoch
        for group, torch_group in zip(ours.optimizer.param_groups, theirs.optimizer.param_groups):
            assert group["momentum"] == torch_group["momentum"], epoch
        if epoch < 24:
            theirs.optimizer.step()  # torch warns when a scheduler steps before its optimizer
            theirs.step(), ours.step()


def test_reduce_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.9, 0.91, 0.9, 0.85, 0.86, 0.87, 0.88, 0.89, 0.5, 0.6, 0.7, 0.8]
    for options in [dict(patience=1, cooldown=2, factor=0.3), dict(mode="max", threshold_mode="abs", threshold=0.02,
                                                                    patience=0, min_lr=[0.05, 0.01])]:
        theirs, ours = torch_and_ours(lambda m, opt: m.ReduceLROnPlateau(opt, **options))
        for metric in metrics:
            theirs.step(metric), ours.step(metric)
            assert ours.get_last_lr() == theirs.get_last_lr()
            assert (ours.num_bad_epochs, ours.cooldown_counter, ours.best) == \
                (theirs.num_bad_epochs, theirs.cooldown_counter, theirs.best)
