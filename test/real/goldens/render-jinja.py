# Renders a chat template the way Hugging Face transformers does (apply_chat_template): Jinja2's
# ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, raise_exception and tojson. Python's Jinja2 is a
# second, independent implementation next to the @huggingface/jinja that llama-dialog renders with.
#   python3 render-jinja.py < {"template", "messages", "bos_token", "eos_token", "add_generation_prompt"}
import json
import sys

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


request = json.load(sys.stdin)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
env.globals["raise_exception"] = raise_exception
env.filters["tojson"] = lambda value, indent=None: json.dumps(value, ensure_ascii=False, indent=indent)
text = env.from_string(request["template"]).render(
    messages=request["messages"],
    bos_token=request["bos_token"],
    eos_token=request["eos_token"],
    add_generation_prompt=request["add_generation_prompt"],
)
sys.stdout.write(json.dumps({"text": text}))
