"""The Trainee-Bench task families, one module each, registered by the reference's task name in
:data:`FAMILIES`."""
