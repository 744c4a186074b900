"""An SSH client (paramiko) that logs in with keyboard-interactive authentication, answering
every prompt with an empty line (Enter), and runs one command. Prints JSON: whether the login
succeeded, the prompts it was shown, and the command's output.

    python3 ssh_keyboard_interactive.py HOST PORT USER COMMAND
"""
import json
import sys

import paramiko


def main():
    host, port, user, command = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    prompts = []

    def handler(title, instructions, fields):
        prompts.extend(text for text, _ in fields)
        if instructions:
            prompts.append(instructions)
        return ["" for _ in fields]

    transport = paramiko.Transport((host, port))
    transport.connect()
    result = {"ok": False, "prompts": prompts, "output": None, "error": None}
    try:
        transport.auth_interactive(user, handler)
        result["ok"] = transport.is_authenticated()
        if result["ok"]:
            channel = transport.open_session()
            channel.exec_command(command)
            result["output"] = channel.makefile("r").read().decode()
    except paramiko.AuthenticationException as error:
        result["error"] = str(error)
    finally:
        transport.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
