"""Scale-out on Ray (`--executor ray`, docs/scale-out.md): the driver's executor, the worker
actor that plays units with the local engine's code, the cluster's one call state, and the
supervised local Ray instance. Importing this package does not import Ray; its modules do."""
