"""The scripted optimizer models (`mock:opt_agent`, `mock:opt_judge`) for the job's part."""

from tests.optimize.conftest import models

__all__ = ["models"]
