"""Provider implementations behind `tether.model.<provider>`; not public API.

Each provider module imports its SDK only when a client is first needed.
"""
