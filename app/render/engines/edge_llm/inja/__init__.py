"""TensorRT Edge-LLM's patched Inja 3.5.0 in Python: `render.load` and `render.render`."""
