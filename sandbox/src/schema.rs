//! Validation of custom objects against a CRD openAPIV3Schema: structure, defaults, CEL rules.
