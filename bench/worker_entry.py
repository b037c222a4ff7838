"""The entry point of bench.py's worker processes, in a module of its own so
that the driver can name it without importing torch (the fork server has
torch_worker, and with it torch, imported already)."""


def serve(target, job, connection):
    """Sends torch_worker.<target>(job) (run_job or run_mm) back to the driver."""
    import torch_worker
    connection.send(getattr(torch_worker, target)(job))
    connection.close()
