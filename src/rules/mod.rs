//! Rules as data: kernel categories, phase signals, layer markers.
