"""What the command (:mod:`jitmagic.frontends.command`) needs of its process and its
script, apart from measuring: Ctrl-C as the process ends and the presses counted
(:mod:`.process`), the script read and checked before it runs (:mod:`.loading`), and
stdout and stderr that never end a finished measurement in an error (:mod:`.streams`).
"""
