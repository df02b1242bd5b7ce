"""Training: backward, train_step and fit."""
