"""Writes the report twice from one description: index.html for a browser, README.md for a forge."""
import html
from dataclasses import dataclass, field


@dataclass
class Figure:
    png: str                  # file name, beside the report
    finding: object           # findings.Finding: verdict and sentence


@dataclass
class Section:
    title: str
    answers: str
    figures: list
    npf_file: str             # relative to the repository root
    npf_command: str
    point_command: str        # what each point runs, with NPF's variables
    seconds: float


@dataclass
class Report:
    title: str
    facts: list               # (label, value) pairs about the run
    how: list                 # commands that make this report
    sections: list = field(default_factory=list)


def _verdict(finding):
    return finding.verdict[0].upper() + finding.verdict[1:]


def markdown(report):
    out = [f"# {report.title}", ""]
    out += [f"- {label}: {value}" for label, value in report.facts]
    out += ["", "Made by:", ""] + [f"    {c}" for c in report.how] + [""]
    for i, s in enumerate(report.sections, 1):
        out += [f"## {i}. {s.title}", "", f"Answers: {s.answers}. NPF test file: `{s.npf_file}` "
                f"({s.seconds:.0f} s).", ""]
        for f in s.figures:
            out += [f"![{s.title}]({f.png})", "", f"**{_verdict(f.finding)}.** {f.finding.sentence}", ""]
        out += ["Each point runs:", ""] + [f"    {line}" for line in s.point_command.splitlines()]
        out += ["", "The sweep:", "",
                f"    {s.npf_command}", ""]
    return "\n".join(out)


_STYLE = """body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;line-height:1.4}
img{max-width:100%;border:1px solid #ddd}pre{background:#f5f5f5;padding:.6em;overflow-x:auto}
.verdict{font-weight:bold}"""


def html_page(report):
    e = html.escape
    out = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{e(report.title)}</title><style>{_STYLE}</style></head><body>",
           f"<h1>{e(report.title)}</h1>", "<ul>"]
    out += [f"<li>{e(label)}: {e(str(value))}</li>" for label, value in report.facts]
    out += ["</ul>", "<p>Made by:</p>", f"<pre>{e(chr(10).join(report.how))}</pre>"]
    for i, s in enumerate(report.sections, 1):
        out += [f"<h2>{i}. {e(s.title)}</h2>",
                f"<p>Answers: {e(s.answers)}. NPF test file: <code>{e(s.npf_file)}</code> "
                f"({s.seconds:.0f} s).</p>"]
        for f in s.figures:
            out += [f'<p><img src="{e(f.png)}" alt="{e(s.title)}"></p>',
                    f'<p><span class="verdict">{e(_verdict(f.finding))}.</span> {e(f.finding.sentence)}</p>']
        out += ["<p>Each point runs:</p>", f"<pre>{e(s.point_command)}</pre>",
                "<p>The sweep:</p>", f"<pre>{e(s.npf_command)}</pre>"]
    out.append("</body></html>")
    return "\n".join(out)
