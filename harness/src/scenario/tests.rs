//! Unit tests of the scenario language: one per rule, each asserting the exact message.
