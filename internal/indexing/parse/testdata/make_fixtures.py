#!/usr/bin/env python3
"""Writes the hand-made binary fixtures of this directory.

    python3 make_fixtures.py            # handmade.docx, ../../pdf/testdata/handmade.pdf

handmade.pdf is a three-page PDF 1.4 written object by object with a correct
cross-reference table (standard Helvetica fonts, page 2's content stream
Flate-compressed, TJ kerning and Td moves between words; page 3 a
Type0 font with Identity-H codes and a ToUnicode CMap, and a form XObject). handmade.docx is a
WordprocessingML package zipped by hand: styles.xml, numbering.xml, a title,
a subtitle, headings, runs with tabs and breaks, a nested numbered list and
a table.

The other binary fixtures were made from these with LibreOffice and qpdf
(see README.md). The PDF fixtures live with the PDF package, in
internal/indexing/pdf/testdata.
"""
import os
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def pdf_string(s):
    return "(" + s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def make_pdf(path):
    page1 = "\n".join([
        "BT /F2 24 Tf 72 750 Td " + pdf_string("Quarterly Report") + " Tj ET",
        "BT /F1 12 Tf 72 710 Td 14 TL",
        pdf_string("Revenue grew in every region this quarter, led by") + " Tj",
        "T* " + pdf_string("strong demand for the new hosting plans.") + " Tj",
        "ET",
        "BT /F1 12 Tf 72 670 Td " + pdf_string("Costs stayed flat.") + " Tj ET",
        "BT /F1 12 Tf 72 640 Td " + pdf_string("\x95") + " Tj 18 0 Td "
        + pdf_string("Hosting revenue up 20%") + " Tj ET",
        "BT /F1 12 Tf 72 626 Td " + pdf_string("\x95") + " Tj 18 0 Td "
        + pdf_string("Support tickets down") + " Tj ET",
        "BT /F1 10 Tf 300 40 Td (1) Tj ET",
        "",
    ]).encode("latin-1")
    page2 = "\n".join([
        "BT /F2 18 Tf 72 750 Td " + pdf_string("Outlook") + " Tj ET",
        "BT /F1 12 Tf 72 720 Td",
        "[" + pdf_string("The second page talks about ") + " " + pdf_string("zebras")
        + " -30 " + pdf_string(" and their stripes.") + "] TJ",
        "0 -14 Td [(Next) -250 (year) -250 (looks) -250 (bright.)] TJ",
        "ET",
        "BT /F1 12 Tf 72 680 Td (Caf\xe9 na\xefve r\xe9sum\xe9) Tj 150 0 Td (and more) Tj ET",
        "BT /F1 10 Tf 300 40 Td (2) Tj ET",
        "",
    ]).encode("latin-1")
    page2z = zlib.compress(page2)

    # Page 3: a Type0 (CID) font with Identity-H codes and a ToUnicode
    # CMap, and text drawn by a form XObject.
    uni = "Привет, мир. Γειά σου κόσμε."
    chars = sorted(set(uni))
    cid = {c: i + 1 for i, c in enumerate(chars)}
    hexcodes = "".join("%04X" % cid[c] for c in uni)
    page3 = ("BT /F3 14 Tf 72 750 Td <%s> Tj ET\n"
             "q 1 0 0 1 72 700 cm /Fm1 Do Q\n" % hexcodes).encode("latin-1")
    form = b"BT /F1 12 Tf 0 0 Td (Text inside a form XObject.) Tj ET\n"
    cmap = ("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
            "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
            "%d beginbfchar\n%s\nendbfchar\nendcmap\n"
            "CMapName currentdict /CMap defineresource pop\nend\nend\n"
            % (len(chars), "\n".join("<%04X> <%04X>" % (cid[c], ord(c)) for c in chars))).encode("latin-1")
    widths = " ".join("600" for _ in chars)

    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 4 0 R 9 0 R] /Count 3 "
        b"/Resources << /Font << /F1 7 0 R /F2 8 0 R >> >> /MediaBox [0 0 612 792] >>",
        b"<< /Type /Page /Parent 2 0 R /Contents 5 0 R >>",
        b"<< /Type /Page /Parent 2 0 R /Contents 6 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(page1) + page1 + b"\nendstream",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(page2z) + page2z + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
        # 9: page 3, with its own resources
        b"<< /Type /Page /Parent 2 0 R /Contents 10 0 R "
        b"/Resources << /Font << /F1 7 0 R /F3 11 0 R >> /XObject << /Fm1 14 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(page3) + page3 + b"\nendstream",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /DejaVuSans /Encoding /Identity-H "
        b"/DescendantFonts [12 0 R] /ToUnicode 13 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /DejaVuSans "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> "
        b"/DW 1000 /W [1 [" + widths.encode() + b"]] >>",
        b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 500 50] "
        b"/Resources << /Font << /F1 7 0 R >> >> /Length %d >>\nstream\n" % len(form) + form + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n" % (len(objs) + 1)
    out += b"0000000000 65535 f \n"
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    with open(path, "wb") as f:
        f.write(out)


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def para(text, style=None, num=None, extra_ppr=""):
    ppr = ""
    if style:
        ppr += '<w:pStyle w:val="%s"/>' % style
    if num is not None:
        ppr += '<w:numPr><w:ilvl w:val="%d"/><w:numId w:val="1"/></w:numPr>' % num
    ppr += extra_ppr
    return '<w:p><w:pPr>%s</w:pPr><w:r><w:t xml:space="preserve">%s</w:t></w:r></w:p>' % (ppr, text)


def cell(text):
    return '<w:tc><w:tcPr><w:tcW w:w="2000" w:type="dxa"/></w:tcPr>%s</w:tc>' % para(text)


def make_docx(path):
    body = "".join([
        para("Botplatform Handbook", "Title"),
        para("Internal guide", "Subtitle"),
        para("Getting started", "Heading1"),
        '<w:p><w:pPr><w:pStyle w:val="Normal"/><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>'
        '<w:r><w:t xml:space="preserve">Install the </w:t></w:r>'
        '<w:r><w:rPr><w:b/></w:rPr><w:t>server</w:t></w:r>'
        '<w:r><w:t xml:space="preserve"> with one command.</w:t></w:r>'
        '<w:r><w:tab/><w:t>Then open the dashboard &amp; sign in.</w:t></w:r></w:p>',
        '<w:p><w:r><w:t>Line one</w:t><w:br/><w:t>Line two</w:t></w:r></w:p>',
        para("Botplatform runs many small bots side by side on one server. Each bot keeps its own "
             "storage, its own schedule and its own secrets, and the server makes sure that one "
             "misbehaving bot cannot slow the others down. Files that a bot uploads can be indexed, "
             "so that the bot can later search them by meaning rather than by exact words."),
        para("Unicode check: Привет мир, naïve café."),
        para("First step", "ListParagraph", 0),
        para("Second step", "ListParagraph", 0),
        para("A nested detail", "ListParagraph", 1),
        para("Configuration", "Heading2", extra_ppr="<w:pageBreakBefore/>"),
        '<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="4000" w:type="dxa"/></w:tblPr>'
        '<w:tblGrid><w:gridCol w:w="2000"/><w:gridCol w:w="2000"/></w:tblGrid>'
        '<w:tr>' + cell("Setting") + cell("Default") + '</w:tr>'
        '<w:tr>' + cell("port") + cell("8080") + '</w:tr>'
        '<w:tr>' + cell("workers") + cell("4") + '</w:tr>'
        '</w:tbl>',
        para("The configuration lives in one file."),
        '<w:p><w:pPr><w:pStyle w:val="Heading3"/></w:pPr><w:r><w:t>Deleted</w:t></w:r>'
        '<w:del w:id="1" w:author="x" w:date="2024-01-01T00:00:00Z"><w:r><w:delText>gone</w:delText></w:r></w:del>'
        '<w:r><w:t xml:space="preserve"> text stays out</w:t></w:r></w:p>',
        '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" '
        'w:left="1440" w:header="720" w:footer="720" w:gutter="0"/></w:sectPr>',
    ])
    document = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                '<w:document %s><w:body>%s</w:body></w:document>' % (W, body))

    def style(sid, name, size, outline=None, based="Normal"):
        ppr = '<w:pPr><w:keepNext/>%s</w:pPr>' % (
            '<w:outlineLvl w:val="%d"/>' % outline if outline is not None else "")
        return ('<w:style w:type="paragraph" w:styleId="%s"><w:name w:val="%s"/><w:basedOn w:val="%s"/>'
                '<w:next w:val="Normal"/><w:qFormat/>%s<w:rPr><w:b/><w:sz w:val="%d"/></w:rPr></w:style>'
                % (sid, name, based, ppr, size))

    styles = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles %s>'
              '<w:docDefaults><w:rPrDefault><w:rPr><w:sz w:val="22"/></w:rPr></w:rPrDefault></w:docDefaults>'
              '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/>'
              '<w:pPr><w:spacing w:after="160"/></w:pPr></w:style>'
              % W
              + style("Title", "Title", 56)
              + style("Subtitle", "Subtitle", 30)
              + style("Heading1", "heading 1", 32, 0)
              + style("Heading2", "heading 2", 28, 1)
              + style("Heading3", "heading 3", 24, 2)
              + '<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/>'
                '<w:basedOn w:val="Normal"/><w:pPr><w:ind w:left="720"/></w:pPr></w:style>'
              + '<w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/>'
                '<w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4" w:space="0" w:color="auto"/>'
                '<w:left w:val="single" w:sz="4" w:space="0" w:color="auto"/>'
                '<w:bottom w:val="single" w:sz="4" w:space="0" w:color="auto"/>'
                '<w:right w:val="single" w:sz="4" w:space="0" w:color="auto"/>'
                '<w:insideH w:val="single" w:sz="4" w:space="0" w:color="auto"/>'
                '<w:insideV w:val="single" w:sz="4" w:space="0" w:color="auto"/>'
                '</w:tblBorders></w:tblPr></w:style>'
              + '</w:styles>')

    numbering = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:numbering %s>'
                 '<w:abstractNum w:abstractNumId="0">'
                 '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%%1."/>'
                 '<w:lvlJc w:val="left"/><w:pPr><w:ind w:left="720" w:hanging="360"/></w:pPr></w:lvl>'
                 '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="bullet"/><w:lvlText w:val="o"/>'
                 '<w:lvlJc w:val="left"/><w:pPr><w:ind w:left="1440" w:hanging="360"/></w:pPr></w:lvl>'
                 '</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>' % W)

    content_types = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        '<Override PartName="/word/styles.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>'
        '<Override PartName="/word/numbering.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/>'
        '</Types>')
    rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="rId1" '
            'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
            'Target="word/document.xml"/></Relationships>')
    doc_rels = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
                '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                '<Relationship Id="rId1" '
                'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" '
                'Target="styles.xml"/>'
                '<Relationship Id="rId2" '
                'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" '
                'Target="numbering.xml"/></Relationships>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in [
            ("[Content_Types].xml", content_types),
            ("_rels/.rels", rels),
            ("word/document.xml", document),
            ("word/_rels/document.xml.rels", doc_rels),
            ("word/styles.xml", styles),
            ("word/numbering.xml", numbering),
        ]:
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)


if __name__ == "__main__":
    make_pdf(os.path.join(HERE, "..", "..", "pdf", "testdata", "handmade.pdf"))
    make_docx(os.path.join(HERE, "handmade.docx"))
