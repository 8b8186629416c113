//! Analyses that read the linked model.
