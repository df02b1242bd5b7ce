"""What ``adcompile.fit`` returns and shows: the ``History`` of epoch losses, and the
progress bar (tqdm) that says "compiling" until the first epoch has run."""
import sys


class History(list):
    """The training loss of each epoch (a plain list, as ``fit`` has always returned), with
    ``val_loss`` (the validation loss of each epoch, when ``fit`` got ``validation_data``),
    ``lr`` (the first parameter group's learning rate at the start of each epoch) and
    ``history``, Keras-style: ``{"loss": [...], "val_loss": [...], "lr": [...]}``.

    >>> from adcompile.training.history import History
    >>> history = History()
    >>> history.record(loss=0.5, lr=0.1, val_loss=0.7)
    >>> history == [0.5], history.val_loss, history.history["lr"]
    (True, [0.7], [0.1])
    """

    def __init__(self, losses=()):
        super().__init__(losses)
        self.val_loss = []
        self.lr = []

    def record(self, loss, lr, val_loss=None):
        self.append(loss)
        self.lr.append(lr)
        if val_loss is not None:
            self.val_loss.append(val_loss)

    @property
    def loss(self):
        return list(self)

    @property
    def history(self):
        entries = {"loss": list(self)}
        if self.val_loss:
            entries["val_loss"] = list(self.val_loss)
        entries["lr"] = list(self.lr)
        return entries

    def __repr__(self):
        return f"History({list(self)!r}" + (f", val_loss={self.val_loss!r})" if self.val_loss else ")")


class ProgressBar:
    """A tqdm bar over the epochs, on a terminal only (``enabled=False``, or stderr not a
    terminal: nothing is shown). It says "compiling" until ``epoch_done`` is first called."""

    def __init__(self, total, initial, enabled):
        self.bar = None
        if enabled and sys.stderr.isatty():
            from tqdm import tqdm  # lazy: tqdm is slow to import
            self.bar = tqdm(total=total, initial=initial, unit="epoch", leave=True, desc="compiling")

    def epoch_done(self, loss, val_loss=None):
        if self.bar is None:
            return
        self.bar.set_description("epoch", refresh=False)
        values = {"loss": f"{loss:.4f}"}
        if val_loss is not None:
            values["val_loss"] = f"{val_loss:.4f}"
        self.bar.set_postfix(values, refresh=False)
        self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()
