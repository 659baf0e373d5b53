"""Front ends: the cell magic, the widget, the command and the demo."""
