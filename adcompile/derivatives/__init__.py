"""The transforms built on derived functions: jvp, hvp, hessian, jacobian, vjp, vmap, and derivatives inside compiled code."""
