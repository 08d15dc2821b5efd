import unicodedata, hashlib
def rs(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"': out.append('\\"')
        elif ch == '\\': out.append('\\\\')
        elif ch == '\n': out.append('\\n')
        elif ch == '\t': out.append('\\t')
        elif ch == '\r': out.append('\\r')
        elif 32 <= o < 127: out.append(ch)
        elif o < 128 or unicodedata.category(ch)[0] in 'MCZ' or ch.isspace() or o in (0xfffc, 0xfeff, 0x212a, 0x17f, 0x130, 0x131):
            out.append('\\u{%x}' % o)
        else: out.append(ch)
    out.append('"')
    return ''.join(out)
def md5(s): return hashlib.md5(s.encode('utf-8')).hexdigest()
