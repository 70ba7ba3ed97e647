"""Worlds served over the Model Context Protocol."""
