"""The histories the project makes and finds: seeded sessions (``generate``), a seeded Claude Code log
(``generate_claude_code``), the text they are made of (``synth``), and which files a study reads (``datasets``).
"""
