// MathJax reads the maths pymdownx.arithmatex leaves in the pages (\( ... \) and \[ ... \]); mkdocs.yml loads
// MathJax itself after this configuration. Without a network the pages still build; the maths shows as its source.
window.MathJax = {
  tex: { inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true },
  options: { ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex" },
};
