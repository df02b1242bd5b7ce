"""The kinds of derived function, one small class each: ``Gradient`` (``grad``),
``ValueAndGradient``, ``VectorJacobianProduct`` (``vjp``), ``JacobianVectorProduct`` (``jvp``),
``Hessian`` and ``Jacobian``. Each says how its IR is built from the base's and how its results
reach the user; ``DerivedFunction(base, kind, ...)`` (``derived_function.py``) makes them."""
from ..errors import CallError
from ..ir.builder import Namer
from ..transforms.derived_reverse import pullback_ir, reverse_applies, reverse_of_derived
from ..transforms.forward import forward
from ..transforms.matrix_ir import matrix_ir
from ..transforms.reverse import reverse
from .aux_outputs import (aux_structure, finish_matrix_with_aux, finish_with_aux, loss_function, matrix_with_aux,
                          with_aux_results)
from ..tree.structure import LEAF
from .derived_function import DerivedFunction
from .assembled_matrices import MatrixLayout, assembled_jacobian
from .result_trees import results_tree, root_results_tree, tuple_tree

MATRIX_KINDS = ("hessian", "jacobian")  # derived functions returning one matrix


class ReverseMode(DerivedFunction):
    """vjp, and the gradients: reverse mode of the base (of its loss only, with ``has_aux``)."""

    returns_gradients = True

    def results_tree(self, base, grads):
        return tuple_tree([base, grads])  # the outputs, then the gradients

    def derived_ir(self, sig, wrt):
        if self.has_aux:
            return self.reverse_with_aux(sig, wrt)
        base_ir = self.base.ir(sig)
        self.check_output(base_ir)
        if isinstance(self.base, DerivedFunction):
            return reverse_of_derived(self.base, sig, wrt, self.kind)
        return reverse(base_ir, wrt, Namer(), mode=self.kind)

    def check_output(self, base_ir):
        """Whether the base's results suit this transform."""

    def reverse_with_aux(self, sig, wrt):
        """Reverse mode of ``(loss, aux) = f(...)`` with respect to ``loss`` only, aux returned too."""
        self.check_base_is_primal("loss")
        loss, copies, namer = loss_function(self.base.ir(sig), self.name)
        self.check_scalar_output(loss)
        return with_aux_results(reverse(loss, wrt, namer, mode=self.kind), copies, len(wrt))


class VectorJacobianProduct(ReverseMode):
    """``vjp``: the base's parameters, then one cotangent per result; the results, then the
    cotangents of the ``wrt`` parameters."""

    kind = "vjp"


class Gradient(ReverseMode):
    """``grad``: the gradient of a scalar function, one per ``wrt`` argument (a tuple for a
    tuple ``wrt``); with ``has_aux``, ``(gradient, aux)``."""

    kind = "grad"
    needs_wrt = True

    def check_output(self, base_ir):
        self.check_scalar_output(base_ir)

    def results_tree(self, base, grads):
        return grads

    def split(self, sig, result):
        n_wrt = len(self.resolved_wrt(sig))
        grads = tuple(result[len(result) - n_wrt:])
        return None, grads if self.wrt_is_tuple else grads[0]

    def finisher(self, sig, fn_ir):
        restore = super().finisher(sig, fn_ir)
        n_wrt = len(self.resolved_wrt(sig))
        if self.has_aux:
            finish_aux = finish_with_aux(self.kind, aux_structure(self.base.ir(sig), self.name), n_wrt,
                                         self.wrt_is_tuple)
            return lambda result: finish_aux(restore(result))
        return self.finish_plain(sig, restore, n_wrt)

    def finish_plain(self, sig, restore, n_wrt):
        def finish(result):
            result = restore(result)
            grads = tuple(result[len(result) - n_wrt:])
            return grads if self.wrt_is_tuple else grads[0]
        return finish

    def user_returns_tuple(self, sig):
        return self.wrt_is_tuple


class ValueAndGradient(Gradient):
    """``value_and_grad``: ``(value, gradient)`` from one pass; with ``has_aux``,
    ``((value, aux), gradient)``."""

    kind = "value_and_grad"

    def split(self, sig, result):
        return DerivedFunction.split(self, sig, result)

    def results_tree(self, base, grads):
        return tuple_tree([base, grads])

    def finish_plain(self, sig, restore, n_wrt):
        single_value = not self.base.ir(sig).returns_tuple

        def finish(result):
            result = restore(result)
            grads = tuple(result[len(result) - n_wrt:])
            values = tuple(result[:len(result) - n_wrt])
            return (values[0] if single_value else values), (grads if self.wrt_is_tuple else grads[0])
        return finish

    def user_returns_tuple(self, sig):
        return True


class JacobianVectorProduct(DerivedFunction):
    """``jvp``: the base's parameters, then one tangent per ``wrt`` parameter; the results, then
    their tangents (only the tangents with ``tangents_only``)."""

    kind = "jvp"

    def results_tree(self, base, grads):
        return base if self.tangents_only else tuple_tree([base, base])  # (outputs,) then their tangents

    def derived_ir(self, sig, wrt):
        base_ir = self.base.ir(sig)
        derived = forward(base_ir, wrt, Namer())
        if self.tangents_only:
            derived.results = derived.results[len(base_ir.results):]
        return derived


class Matrix(DerivedFunction):
    """A Hessian or Jacobian with respect to one argument: a loop over unit directions
    (``transforms/matrix_ir.py``); ``derived`` is the jvp (or vjp) whose calls fill one column
    (or row), whose code is the loop's body. With ``has_aux``, ``(matrix, aux)``."""

    def __init__(self, base, kind, wrt, tangents_only=False, mode="rev", has_aux=False):
        super().__init__(base, kind, wrt, tangents_only, mode, has_aux)
        if self.wrt is None or self.wrt_is_tuple:
            raise CallError(f"{kind}: wrt must be a single argument")
        self.describe(self.param_names[self.wrt[0]])

    def results_tree(self, base, grads):
        if not base.is_leaf:
            raise CallError(f"{self.name}: the {self.kind} of a function returning a tuple, list or dict is "
                            "assembled from one derivative per entry, so it is not a function to differentiate "
                            "again; differentiate a function returning one array")
        return base

    def derived_ir(self, sig, wrt):
        if self.has_aux:
            self.check_base_is_primal("out")
            return matrix_with_aux(self.kind, self.base.ir(sig), wrt[0], self.mode, self.name)
        return self.matrix_ir(sig, wrt[0])

    def finisher(self, sig, fn_ir):
        restore = super().finisher(sig, fn_ir)
        if not self.has_aux:
            return restore
        finish_matrix = finish_matrix_with_aux(aux_structure(self.base.ir(sig), self.name))
        return lambda result: finish_matrix(restore(result))

    def call_arguments(self, args, kwargs=None):
        if not (kwargs or len(args) != len(self.param_names)):
            return super().call_arguments(args, kwargs)
        root = self.base
        while isinstance(root, DerivedFunction):
            root = root.base
        try:  # told as the call of the function the matrix is of
            return root.call_arguments(args, kwargs)
        except CallError as error:
            raise CallError(f"{self.name}: {error}") from None

    def user_returns_tuple(self, sig):
        return self.has_aux

    def describe_of(self, what, wrt_name, out_shape):
        self.__doc__ = (f"The {what} of {self.base.name} with respect to {wrt_name}, shape {out_shape}"
                        f"{wrt_name}.shape; call it with the arguments of {self.base.name}"
                        f"({', '.join(self.param_names)}).")


class Hessian(Matrix):
    """``hessian``: a Jacobian of the gradient, by columns (forward over reverse)."""

    kind = "hessian"

    def describe(self, wrt_name):
        base, index = self.base, self.wrt[0]
        self.name = f"hessian({base.name}, wrt={wrt_name!r})"
        self.describe_of("Hessian", wrt_name, f"{wrt_name}.shape + ")
        self.derived = DerivedFunction(DerivedFunction(base, "grad", index), "jvp", index, tangents_only=True)

    def matrix_ir(self, sig, index):
        base_ir = self.base.ir(sig)
        self.check_scalar_output(base_ir)
        gradient = DerivedFunction(self.base, "grad", index).ir(sig)
        column = forward(gradient, [index], Namer())
        return matrix_ir(f"{base_ir.name}_hessian", gradient, index, "fwd", column, shape_source=index)


class Jacobian(Matrix):
    """``jacobian``: by rows of vjps (mode "rev") or columns of jvps (mode "fwd")."""

    kind = "jacobian"

    def describe(self, wrt_name):
        base, index = self.base, self.wrt[0]
        self.name = f"jacobian({base.name}, wrt={wrt_name!r}, mode={self.mode!r})"
        self.describe_of("Jacobian", wrt_name, "out.shape + ")
        by_rows = self.mode == "rev"
        self.derived = DerivedFunction(base, "vjp" if by_rows else "jvp", index, tangents_only=not by_rows)

    def plan(self, sig):
        """The plan of ``Specialised.plan``; where the base returns a tuple, list or dict of arrays,
        the Jacobian's blocks assembled in its structure (``assembled_matrices.py``)."""
        if self.has_aux or not self.assembled(self.base.ir(sig)):
            return super().plan(sig)
        plan = self._plans.get(sig)
        if plan is None:
            layout = MatrixLayout(self.base, (self.wrt[0],), lambda blocks: blocks[0], self.outputs_tree(sig),
                                  self.mode)
            plan = self._plans[sig] = (lambda *args: assembled_jacobian(layout, args), (), lambda result: result)
        self._last_signature = sig
        return plan

    @staticmethod
    def assembled(base_ir):
        """Whether the Jacobian of a base with IR ``base_ir`` is a pytree of blocks: a base returning
        several arrays, or a dict or list of one."""
        return len(base_ir.results) != 1 or getattr(base_ir, "result_structure", None) is not None

    def outputs_tree(self, sig):
        """The structure of the base's results for ``sig``."""
        root = self.base
        while isinstance(root, DerivedFunction):
            root = root.base
        return results_tree(self.base, root_results_tree(root.primal_ir(sig)), lambda level: level.resolved_wrt(sig),
                            lambda k: LEAF)

    def matrix_ir(self, sig, index):
        base_ir = self.base.ir(sig)
        if self.assembled(base_ir):
            raise CallError(f"{self.name}: {self.base.name} returns several arrays, so its Jacobian is a tuple or "
                            "dict of blocks in the output's structure, assembled from one derivative per row when it "
                            "is called, not one generated function: it cannot be differentiated again, called inside "
                            "compiled code or shown by adcompile.source; call it from Python, or inspect the code of "
                            "a row: out, pullback = adcompile.vjp(f, ...); adcompile.source(pullback)")
        # rows need a backward sweep each; where reverse mode does not take the IR, columns are cheaper
        mode = "rev" if self.mode == "rev" and reverse_applies(self.base, sig) else "fwd"
        if mode == "rev":
            line = pullback_ir(self.base, sig, [index])
        else:
            line = forward(base_ir, [index], Namer())
        return matrix_ir(f"{base_ir.name}_jacobian", base_ir, index, mode, line)
