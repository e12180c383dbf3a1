"""`extender sandbox`: a real control plane on this machine (see `extender.sandbox`)."""

from __future__ import annotations

import argparse


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register `extender sandbox` and its sub-commands (in `commands.py`, so that `extender
    --help` reads only this module's one command name)."""
    parser = subparsers.add_parser(
        "sandbox", help="a real control plane on loopback: build, up, down, status",
        description="Build kube-apiserver, kube-scheduler, kube-controller-manager and etcd from "
                    "their Go modules, and run them on loopback with a node agent standing in "
                    "for kubelets and this extender registered in kube-scheduler.")
    from extender.sandbox.commands import add_subcommands

    add_subcommands(parser)
