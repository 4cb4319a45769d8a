"""The Streamlit app's pieces: sidebar inputs and one module per tab. Imported only by ``workbench/app.py``.

``state`` is plain Python (no streamlit import) so tests can drive it directly; every other module
here draws with ``st.`` and asks the engine for numbers.
"""
