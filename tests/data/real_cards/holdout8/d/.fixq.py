import re,sys
p=sys.argv[1]; s=open(p).read(); out=[]
for line in s.splitlines():
    m=re.match(r'^(    (?:origin|author|kind|trimmed|text|date): )(.*)$',line)
    if m:
        v=m.group(2)
        if not (v.startswith("'") and v.endswith("'")) and not re.fullmatch(r'[0-9-]+',v):
            v="'"+v.replace("'","''")+"'"
        line=m.group(1)+v
    out.append(line)
open(p,'w').write("\n".join(out)+"\n")
