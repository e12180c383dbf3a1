"""Two plugins written as an out-of-tree author would: each is its folder's module and one
`PluginRecord`, registered with `extender.engine.registry.register` (see docs/plugins.md)."""
