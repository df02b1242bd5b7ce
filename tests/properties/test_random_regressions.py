"""Regression cases found by the random-program tester (tests/randprog), shrunk to small
reproductions, plus issue 8's minimal reproductions of the same kinds.

Each case runs the same oracles as the random programs (plain Python, finite differences,
forward mode, second order where noted). Cases whose compiler bug is not fixed yet are
``xfail(strict=True)``: when a fix lands they fail as XPASS, and the marker is removed.
"""
import numpy as np
import pytest

from randprog.regression import RegressionCase
from randprog.shrink import snippet

# lowered random program 46008422: a fused loop's buffer that only its fill writes
FUSED_BUFFER_WRITTEN_BUT_NEVER_READ = '''
import numpy as np

def f(y):
    v2 = np.sum(np.eye(2), axis=0)
    u3 = np.sin(v2[:1]) + (1.0 + v2[::2])
    return np.sum(y * y)
'''

CASES = [
    RegressionCase(
        name="broadcast_view_taped_in_a_loop",
        source='''
import numpy as np

def f(y, a, n):
    s3 = 0.0
    for i in range(n):
        M4 = np.exp(-(np.log(1.0 + y[-2:] ** 2)[:, None] - np.tile(y[1:3], 2)[None, :]) ** 2)
        M5 = M4 - np.max(M4, axis=0, keepdims=True)
        s3 = s3 + np.sum(M5 * M5)
    for k in range(3):
        y = np.tanh(y + np.sqrt(1.0 + np.concatenate((y[1:], y[1:2])) * np.concatenate((y[1:], y[1:2]))))
    return 2.0 * np.tanh(s3) + 0.5 * a - y @ y
''',
        args=(np.array([0.9651755527634467, -0.601158107121547, -0.05333026531735596, -0.18176336999106568]),
              0.4452757191093535, 1),
        kind="crash:value_and_grad:AssertionError",  # numba random program 69000203: np.tile's
        backend="numba",                             # broadcast, read-only in numba, on a list tape
    ),
    RegressionCase(
        name="transpose_carried_through_a_loop_after_a_checked_division",
        source='''
import numpy as np

def f(A, x):
    u = x / x[2]
    h = A.T
    for i in range(1):
        s = np.sum(h)
        h = np.tanh(h * 0.9)
    return u @ u + s
''',
        args=(np.array([[-0.04, 0.84], [0.38, 0.63], [0.85, -0.16], [0.99, -0.9]]),
              np.array([-0.92, -0.09, -0.27, 0.4])),
        kind="crash:jvp:NotImplementedError",  # numba random program 68000142: numba could not
        backend="numba",                       # allocate the loop's array of layout 'A'
    ),
    RegressionCase(
        name="inlined_helper_rebinding_a_float32_parameter_to_float64",
        source='''
import numpy as np

def helper(p0):
    for i in range(1):
        p0 = np.tanh(p0 + np.mean(np.ones(3)))
    return np.sum(p0)

def f(A):
    s = 0.0
    for i in range(A.shape[1]):
        s += helper(A[:, i])
    return s
''',
        args=(np.array([[0.3, -0.6], [0.9, 0.1], [-0.2, 0.5]], dtype=np.float32),),
        kind="crash:forward:GeneratedCodeError",  # numba random program 68000002: numba could not
        backend="numba",                          # unify the parameter's float32 and float64 arrays
    ),
    RegressionCase(
        name="vjp_of_a_scalar_result_a_loop_never_assigns",
        source='''
import numpy as np

def f(y):
    s14 = 0.0
    t15 = y
    for i in range(0):
        s14 = np.sum(t15)
    return s14
''',
        args=(np.array([0.0792778310010811, -0.8760305029332784, -0.3697764489546178, -0.4769858217716767]),),
        kind="crash:vjp:AttributeError",  # lowered random program 65001013 (fixed: a float output is not copied)
    ),
    RegressionCase(
        name="loop_variable_reused_after_negative_step_loop",
        source='''
def f(a, x, n):
    p3, u4 = (2, x)
    for i in range(n, 1, -1):
        p3, a = (a, u4[i])
    for i in range(n):
        pass
    return p3
''',
        args=(-0.6595412323557484, np.array([0.8461755554888482, 0.17545819145646946, -0.38708208591177873]), 0),
        kind="crash:value_and_grad:UnboundLocalError",  # issue 8 item 2 (fixed)
    ),
    RegressionCase(
        name="jvp_of_write_into_argument_slice",
        source='''
import numpy as np

def f(x):
    x[:2] = 2 * x[:2]
    w3 = x.copy()
    return np.sum(w3)
''',
        args=(np.array([0.15614263050515298, -0.7163132975680087, -0.8518037021162552, 0.899562793255013]),),
        kind="wrong:jvp-vs-reverse",  # found by the fast profile; fixed while this was written
    ),
    RegressionCase(
        name='helper_keyword_parameter_rebound_in_loop',
        source='''
import numpy as np
import adcompile

def helper1(p0, scale=0.73):
    s1 = np.tanh(np.sum(p0 * p0) - (np.cos(-1.11) + np.sum(p0[::-1])))
    if s1 < -0.36:
        for i in range(0):
            v2 = p0[::-1] - p0
            v3 = np.concatenate((np.sqrt(1.0 + v2[1:2] * v2[1:2]), np.log(1.0 + np.linspace(-0.5, 0.5, 3) ** 2))) - np.mean(np.outer(p0[2:4], p0), axis=0)
        if s1 > -0.41:
            p4, u5 = (np.tanh(np.sum(p0 @ (0.5 * np.eye(4)))), s1 + np.ones((4, 3)) + (np.full((4, 3), 0.5) + np.ones((4, 3))))
        else:
            for i in range(2):
                scale, s1 = (s1, np.sin(scale + p0.sum()))
                s6 = p0.mean()
                v7 = np.sqrt(1.0 + np.sqrt(1.0 + 0.25 * np.arange(4) * (0.25 * np.arange(4))) * np.sqrt(1.0 + 0.25 * np.arange(4) * (0.25 * np.arange(4))))
                s8 = np.sin(scale)
    return np.concatenate((p0[-1:] - np.linspace(-0.5, 0.5, 1), np.ones(3) * scale))

def f(x, a, b, A):
    for i in range(A.shape[1]):
        a, b = (b, np.sin(a + x[i + 1]))
        count9 = 0
        while count9 < 4 and np.dot(x[np.array([3, 0, 3, 2])], x[::-1]) < -0.4:
            count9 += 1
            x = np.sin(np.exp(np.concatenate((x[::2], x[-2:])))) + 0.5 * x
        W10 = np.copy(x)
        W10[i] = W10[-3]
    w11 = A.copy()
    if a > 0.11:
        u12, u13 = (np.mean(np.ones((3, 4)), axis=0), np.concatenate((x[::2], w11[2, 2:])))
    else:
        v14 = 0.25 * np.arange(4) / (1.0 + x[::-1] ** 2) + helper1(x, scale=0.32)
        s15 = w11.sum()
    return np.sum(w11) + 2.0 * b
''',
        args=(np.array([0.5635053249329904, 0.6677053980190069, -0.013927997982299045, -0.7560518992325593]), 0.48284496026453483, -0.896430715915508, np.array([[-0.8445518847742461, 0.5432564994029265, 0.1330679161713728], [0.41712769655564097, 0.7794901650014767, -0.10357957263799134], [0.21496312856608335, 0.43107490541240656, -0.24496655627410036], [0.6792733014467343, -0.7531577300851788, -0.6283670393859782]])),
        kind='crash:forward:UnboundLocalError',  # random-program seed 10511
    ),
    RegressionCase(
        name='hessian_max_then_loop_carried_tuple',
        source='''
import numpy as np

def f(b, A):
    s3 = np.max(A)
    for i in range(1):
        b, s3 = (s3, np.sin(b))
    return s3
''',
        args=(-0.18545965494749117, np.array([[0.7166185410658097, -0.7118835479113288], [0.14108788437474495, -0.7425238751551739], [-0.01274019581882846, -0.17541241018164322]])),
        kind='crash:hessian:TypeError',  # random-program seed 15464
        second_order=True,
    ),
    RegressionCase(
        name='jvp_column_of_broadcast_result_rebinding_name',
        source='''
import numpy as np

def f(x, y):
    u2, p3 = (x[:, None] - np.full(4, 0.5), y)
    u2 = u2[:, 2]
    return np.sum(u2)
''',
        args=(np.array([0.20317875742542335, 0.8785507863418025, 0.6136095706780484, -0.9694860121892146]), np.array([0.41485262510245446, 0.529251719603012, -0.7014424400469568, -0.3316593205763192])),
        kind='crash:jvp:IndexError',  # random-program seed 13395
    ),
    RegressionCase(
        name='early_return_in_first_loop_then_nested_loops',
        source='''
import numpy as np

def f(x, n):
    for k in range(x.shape[0]):
        return x[k]
    for i in range(n, 1, 1):
        for k in range(n):
            pass
''',
        args=(np.array([-0.03013055115795904, 0.27931009100063386, -0.2624274692094477, -0.9160756701737902]), 1),
        kind='crash:value_and_grad:KeyError',  # random-program seed 10993
    ),
    RegressionCase(
        name='augmented_assign_through_alias_under_truthiness_branch',
        source='''
import numpy as np

def f(x, y, b):
    if y[2]:
        W1 = x
        b += W1[1] - b
    return b
''',
        args=(np.array([-0.6633654285122619, -0.31595323526281693, 0.4984047236496547]), np.array([-0.38586881771536197, 0.9903871625211929, -0.14576495979677295]), 0.9041408733777812),
        kind='wrong:grad-vs-fd',  # random-program seed 10747
    ),
    RegressionCase(
        name='write_into_argument_then_alias',
        source='''
import numpy as np

def f(x):
    x[1:] = np.sin(x[2])
    w6 = x
    return w6 @ w6
''',
        args=(np.array([0.03338080466092497, -0.1526016949671385, 0.14855135446279344]),),
        kind='wrong:jvp-vs-reverse',  # random-program seed 10000
        second_order=True,
    ),
    RegressionCase(
        name='slice_write_from_strided_read_then_alias',
        source='''
import numpy as np

def f(x):
    w1 = np.copy(x)
    w1[:1] = np.sin(w1[::2])
    v4 = w1
    return np.mean(v4)
''',
        args=(np.array([-0.2291179333339597, 0.4152253315490182]),),
        kind='wrong:value_and_grad-value',  # random-program seed 13887
    ),
    RegressionCase(
        name='vjp_leaves_written_argument_unchanged',
        source='''
import numpy as np

def f(x, y):
    x[2] = 2
    return y
''',
        args=(np.array([-0.41490162128203933, 0.5581275111799093, -0.9956103329638599, -0.3236737855882499]), np.array([-0.2016184258757181, -0.9709966643402834, 0.7034746926207787, 0.7987539681866407])),
        kind='wrong:vjp-mutates-arguments',  # random-program seed 10072
        returns='array',
        second_order=True,
    ),
    RegressionCase(
        name='int_variable_becomes_float_in_branch',
        source='''
import numpy as np

def f(b):
    M1 = 3
    s2 = M1
    if M1 < 0.38:
        pass
    else:
        s2 += b ** 2 - s2
    return s2
''',
        args=(-0.7481770708493634,),
        kind='wrong:vjp-vs-fd',  # random-program seed 10673
        returns='array',
    ),
    RegressionCase(
        name="custom_function_output_written_in_loop",
        source='''
import numpy as np
import adcompile

class ScaledTanh(adcompile.Function):
    @staticmethod
    def forward(ctx, u, scale):
        ctx.scale = scale
        t = np.tanh(scale * u)
        ctx.save_for_backward(t)
        return t

    @staticmethod
    def backward(ctx, grad_out):
        t, = ctx.saved_tensors
        return (grad_out * ctx.scale * (1.0 - t * t), None)

def f(x, A):
    for i in range(2):
        M3 = ScaledTanh.apply(A[::-1], 0.52)
        x = 0.5 * x + np.sin(np.sum(M3[:, 0]))
        M3[0] = x[::2]
    return np.sum(x)
''',
        args=(np.array([-0.27, -0.09, -0.71, -0.01]),
              np.array([[0.50, -0.37], [0.08, -0.72], [-0.44, -0.10], [-0.08, 0.42]])),
        # random-program seed 4006316, shrunk by hand: the backward put back M3[0] into the
        # array M3 named last, not the one of the iteration being reversed
        kind="wrong:grad-vs-fd",
    ),
    # issue 8 item 2, the minimal reproductions of the loop-variable kind found above
    RegressionCase(
        name="issue8_item2_loop_variable_reused_after_break_loop",
        source='''
def f(x):
    s = 0.0
    for i in range(3):
        if s > 10.0:
            break
        s = s + x[i] ** 2
    for i in range(3):
        s = s + x[i]
    return s
''',
        args=(np.array([1.0, 2.0, 3.0]),),
        kind="wrong:grad-vs-fd",
    ),
    RegressionCase(
        name="issue8_item2_loop_variable_read_after_dead_loop",
        source='''
def f(x):
    s = x[0]
    for j in range(3):
        s = s * 0.5
    return s + x[j]
''',
        args=(np.array([1.0, 2.0, 3.0]),),
        kind="crash:value_and_grad:NameError",
    ),
    RegressionCase(
        name="gradient_of_a_slice_whose_start_is_the_loop_variable",
        source='''
import numpy as np

def f(x, n):
    W1 = x.copy()
    for i in range(n):
        s12 = np.sum(W1[i:] * 4)
    return s12
''',
        args=(np.array([0.34854681144366784, -0.13537751133827225, 0.038963963076992236]), 3),
        kind="crash:value_and_grad:ShapeError",  # found by the loop constructs of the generator
        backend="lowered",
    ),
    RegressionCase(
        name="hessian_of_a_slice_whose_start_is_the_loop_variable",
        source='''
import numpy as np

def f(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.sin(x[i:]))
    return s
''',
        args=(np.array([0.3, -0.2, 0.5]),),
        kind="crash:hessian:ShapeError",  # grad and hvp are right; the batched tangents are not
        backend="lowered",
        second_order=True,
    ),
    RegressionCase(
        name="vjp_residual_that_is_a_view_read_by_a_fused_loop",
        source='''
import numpy as np

def f(A, x):
    v1 = x[1:][:, None] * (x[1:][:, None] * A.T)
    return v1
''',
        args=(np.array([[-0.35, -0.96, -0.02], [0.74, -0.45, -0.16], [0.13, -0.16, 0.57], [-0.73, 0.004, 0.24]]),
              np.array([0.92, 0.96, -0.40, -0.035])),
        kind="crash:vjp:UnboundLocalError",  # found by the lowered random programs
        backend="lowered",
        returns="array",
    ),
    RegressionCase(
        name="third_order_through_a_loop_that_runs_zero_times_swapping_carried_values",
        source='''
import numpy as np

def f(a, b, x, n):
    s6 = 0.0
    if np.sum(x) > 0.49:
        for i in range(n):
            b, s6 = (s6, np.sin(b))
    return s6
''',
        args=(0.08305840368816608, 0.41057039770105264,
              np.array([-0.8417958446881884, -0.3621073784326665, -0.07388881096934852]), 0),
        kind="crash:grad_of_hessian-grad:UnboundLocalError",  # lowered random program 40000105
        backend="lowered",
        third_order="grad_of_hessian",
        seed=40000105,  # the inner Hessian is taken with respect to b
    ),
    RegressionCase(
        name="hvp_through_a_while_loop_whose_tangent_placeholder_was_given_as_a_buffer",
        source='''
import numpy as np

def f(x, A, y, b):
    x = np.tanh(x + x[::-1])
    w2 = A.copy()
    count3 = 0
    while count3 < 2:
        count3 += 1
        w2[count3] = np.cos(w2[count3]) - x @ (w2 * w2.mean(axis=0, keepdims=True))
        b += np.tanh(w2[0, -1])
    u4, u5 = (x[np.array([1, 1, 1, 2])] * x, w2[:, 0] * x)
    w2[2] = np.cos(w2[2]) - u4[2:]
    w2[3] = y
    return 2.0 * np.sum(u5) + np.sum(np.sin(w2))
''',
        args=(np.array([-0.5056341872375549, -0.5276459213609679, 0.2630647917722757, -0.9293737197240624]),
              np.array([[0.5679260144677616, 0.6393719495586994], [-0.9177079952693974, 0.7986395194953697],
                        [-0.2801759656457701, 0.5845159228370622], [0.9861961072951002, -0.47482012328029155]]),
              np.array([0.5122764048230692, 0.7753839186003602]), 0.4339526166481247),
        kind="crash:hvp:IndexError",  # lowered random program 40002856: the tangent of a placeholder
        backend="lowered",            # was zeros_like of it (empty), then given to a fused loop as its buffer
        second_order=True,
        seed=40002856,
    ),
    RegressionCase(
        name="hessian_of_a_product_a_rewrite_checked_keeps_its_operands_for_the_check",
        source='''
import numpy as np

def f(x, A):
    x = A[:, 0] - x
    v = x @ A
    return v[0]
''',
        args=(np.array([0.1, 0.2, 0.3, 0.4]), np.arange(16.0).reshape(4, 4) / 10.0),
        kind="crash:hessian:NameError",  # lowered random program 40008844: the dead product left
        backend="python",                # rt.check_matmul_shapes(x_1, A) after x_1's assignment was removed
        second_order=True,
        seed=1,  # a seed whose Hessian is taken with respect to x
    ),
    RegressionCase(
        name="fused_buffer_written_but_never_read",
        source=FUSED_BUFFER_WRITTEN_BUT_NEVER_READ,
        args=(np.array([0.67, -0.47, 0.91]),),
        kind="crash:forward:UnboundLocalError",  # lowered random program 46008422 (and 46000279, 46006480):
        backend="lowered",                       # `_t_3[0] = ...` written before `_t_3 = np.empty(...)`
    ),
    RegressionCase(
        name="fused_buffer_written_but_never_read_numba",
        source=FUSED_BUFFER_WRITTEN_BUT_NEVER_READ,
        args=(np.array([0.67, -0.47, 0.91]),),
        kind="crash:forward:UnboundLocalError",
        backend="numba",
    ),
    RegressionCase(
        name="hvp_of_eigenvalues_of_an_exactly_zero_matrix",
        source='''
import numpy as np

def f(x, A):
    A = A - A
    x = np.linalg.eigvalsh(A[:3, 1:])
    return np.mean(x)
''',
        args=(np.array([-0.28, 0.6, -0.46]), np.array([[0.03, 0.33, -0.31, -0.49], [0.43, 0.87, 0.78, 0.26],
                                                   [0.2, -0.93, 0.79, -0.81]])),
        kind="wrong:hvp-vs-fd",  # lowered random program 44006428: repeated eigenvalues gave 0 * inf = NaN
        backend="lowered",
        second_order=True,
    ),
    RegressionCase(
        name="inlined_float32_result_widened_in_a_loop",
        source='''
import numpy as np

def helper(p0, scale=0.35):
    if np.tanh(p0[-2]) > -0.41:
        return p0[1] * p0[-1]
    return scale * np.sum(np.sinc(p0[1:]))

def f(x, a):
    s9 = helper(x[::-1])
    for i in range(2):
        s9 = np.sin(s9 + np.mean(x * a) + np.mean(np.ones(3)))
    return -s9
''',
        args=(np.array([0.35, -0.62, 0.81], dtype=np.float32), -0.86),
        kind="rejected:forward:AdCompileError",  # lowered random program 70007791: the helper's float32
        backend="lowered",                       # result kept its type on every retry ("did not converge")
        dtype="float32",
    ),
    RegressionCase(
        name="conditional_expression_temporary_converted_in_a_loop",
        source='''
import numpy as np

def f(x, b):
    u5 = np.sin(x)
    s = 0.0
    for i in range(2):
        v12 = u5 * 2.0 if x[-1 - i] > -0.39 else np.ones(3) * 0.5
        v12[0] = b
        s = s + np.sum(v12 * x)
    return s + np.sum(u5)
''',
        args=(np.array([0.35, -0.62, 0.81], dtype=np.float32), 0.59),
        kind="rejected:forward:TypeMismatchError",  # lowered random program 70007783: the float32 temporary,
        backend="lowered",                          # converted anew each iteration, was taken for an alias
        dtype="float32",
    ),
    RegressionCase(
        name="early_return_in_a_while_loop_that_never_runs",
        source='''
import numpy as np

def f(x, b):
    count = 0
    while count < 0:
        count += 1
        if x[0] < 0.08:
            return x[count]
    return 0.5 * b
''',
        args=(np.array([0.1, 0.2, 0.3]), 0.3),
        kind="crash:forward:GeneratedCodeError",  # numba random program 45000012: numba pruned the loop
        backend="numba",                          # (a constant condition), leaving `_result` undefined
    ),
    RegressionCase(
        name="float64_cotangent_of_a_float32_number",
        source='''
import numpy as np

def f(x, A, n):
    w8 = x.copy()
    v15 = np.concatenate((np.log(1.0 + np.tanh(w8[np.array([0])]) ** 2), --A[1, 1:]))
    for i in range(n):
        x = np.square(v15[::-1]) - x
    u18, u19 = (x[0:1] * np.tanh(w8[1]), x[::-1] - A[0, -2])
    if np.sum(u19[:1]):
        w8 = w8 + np.cos(np.concatenate((A[0, 1:], v15[1:2])))
    return -v15 @ v15 + 2.0 * np.sum(u18) + w8 @ w8
''',
        args=(np.array([-0.91, 0.80], dtype=np.float32),
              np.array([[-0.75, -0.86], [-0.65, -0.58]], dtype=np.float32), 1),
        kind="crash:vjp-pullback:GeneratedCodeError",  # numba random program 74000080: vjp's float64
        backend="numba",                               # cotangent reached a float32 adjoint in a branch
        dtype="float32",
        returns="tuple",
    ),
]


@pytest.mark.parametrize("case", [
    pytest.param(case, id=case.name,
                 marks=[pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else [])
    for case in CASES
])
def test_random_program_regression(case):
    outcome = case.check()
    assert case.acceptable(outcome), \
        snippet(case.program(), outcome, case.backend)
