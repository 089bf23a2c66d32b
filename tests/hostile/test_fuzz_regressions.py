"""Regression tests for the problems the coverage-guided fuzzer (fuzz/fuzz_arff.py) and the
property-based tests (tests/hostile/test_fuzz_arff.py) found in the ARFF reader. Each keeps the
exact input.

Every input is read as fuzz/fuzz_arff.py reads it: the bytes before an optional ``\\0XML\\0``
separator are the ARFF file, the bytes after it a Mulan XML file; load_arff and iter_arff (chunks of
3 rows) must agree, and only ArffError may come out.
"""

import base64
import bz2
import gzip
import lzma
import zlib

import pytest

from mlsom.datasets import ArffError, iter_arff, load_arff
from tests.helpers.arff_files import OPTIONS, outcomes

XML_SEPARATOR = b"\0XML\0"

# crash-84cbb2049c46c9918805674dd433038bebf48828: bytes that start with bzip2's magic "BZh" but
# hold a damaged stream. bz2 raised OSError("Invalid data stream") out of load_arff.
DAMAGED_BZIP2 = base64.b64decode(
    "QlpoOTFBWSZTWX13pXcAAEPfhBomFTT0mj1P1E0bUaAaaCUKT0m0mE0ZMBND1M0lXLfPVXkRx6wtAx7gttIOUX8VAVsK"
    "KCUGUwHs6CxgbnppqBBTAFrMhc9wCeKiqYuSPSdXRhF7oqsubpSzWwCgdftt0kW2Afl8H0SADAzhONxQGgHyJGYe/qJK"
    "ZhwEgswisIoG5ER4QDkXckVmHASCzCKwigbkRHhAORdyRThQkH13pXc="
)

# crash-0698f431dc26446246740c7982700a0f8716b27e (zlib-compressed here): yeast's header and rows
# with a non-number on line 306 and a byte that is not UTF-8 (0xb4) on line 308. load_arff blamed
# line 305 for the undecodable byte (the first line of the block being decoded), iter_arff line 306
# for the number: the two readers disagreed and neither named the right line for the encoding.
UNDECODABLE_AFTER_A_FAULTY_LINE = zlib.decompress(
    base64.b64decode(
        "eNp9mkuOJlcRhedehReA0I2475lByCM8QiygbLegpXK31FSPELtigZyIE9kG7GO15Ernn48b7y/i5jef3r2+vL3/+OHr"
        "7z6/vr3/88v3717/9PL28tVX37y8vX16//3nt3df/+Htzb7+8Pmnd5/e//B/512c7+L8EOenOL/E+S3OH3H+ivPW1A9K"
        "YlMim5LZlNCmpDYltim5TQluSnJXkru0tZLcleSuJHcluSvJXUnuSnJXkncleVeSd+nmSvKuJO9K8q4k70ryriTvSvKh"
        "JB9K8qEkHzLCleRDST6U5ENJPpTkQ0k+leRTST6V5FNJPmVyU5JPJflUkk8l+VSSLyX5UpIvJflSki8l+ZJ5XUm+lORL"
        "Sb6U5FtJvpXkW0m+leRbSb6V5FuWNCX5VpJvJflRkh8l+VGSHyX5UZIfJflRkh9ZzZXkR0l+leRXSX6V5FdJfpXkV0l+"
        "leRXSX4lyGiSkSjTJMs0CTNN0kyTONMkzzQJNE0STZNI06QOfgPnpA400Gmi00inmU5DnaY6jXWS60yCnblmWqkDyXYm"
        "4c4k3ZnEO5N8ZxLwTBKeScQzyXjWNdhLHUjMM8l5JkHPJOmZRD2TrGcS9kzSnkncs6G7G6kDSXwmkc8k85mEPpPUZxL7"
        "THKfSfAzSX42dYsndSDhzyT9mcQ/k/xnEgBNEqBJBDTJgCYh0Jbuc6UOJAeaBEGTJGgSBU2yoEkYNEmDJnHQJA/a1s2+"
        "1IFEQpNMaBIKTVKhSSw0yYUmwdAkGZpEQzt64iF1IOnQJB6a5EOTgGiSEE0ioklGNAmJJinRrh776LmPHPxITnTJiS45"
        "0SUnuuREl5zokhNdcqJLTnTTwy+pA8mJLjnRJSe65ESXnOiSE11youv5nx4A/sYEUOpAzwD1EFBPAfUYUM8B9SBQcqJL"
        "TnTJid71GFTqQHKiS050yYkuOdElJ7rkRJec6JITXXKiDz0LljqQnOiSE11yoktOdMmJLjnRJSe65ESXnOhTD8SlDiQn"
        "uuREl5zokhNdcqJLTnTJiS450SUn+tK7AlIHkhNdcqJLTnTJiS450SUnuuREl5zokhN9660RqQPJiS450SUnuuREl5zo"
        "khNdcqJLTnTJiX70/pDUgeREl5zokhNdcqJLTvRf58Q/vnv54e9f/7P9zv7136f/8vnDP969/fL8ty+vr99+fH3/8rd3"
        "v/Lj+3evP/7y9HcfP394e3n/4Ze//PXT9y/P6a+++TH2gtvv18C//TscrDX6jIMz28gz97bZ42DCrRcORttnDRyg/e7t"
        "4mD2CViOgznXyTMHF3kc7N1uXNxvGzOejOIy5onbdwPyxAPx5/LgABHrYOeZ2xqvmRcZOZ4z28mLkVLviYNuzXIZfc9m"
        "8eTRd18370Jjlstop3u8HWL2lGuu3VZcPMdCnssz6+Zdy/xOiwPgYssDSLjy4I6ZSph77FzhxhV35V0jb5ohaL3SUnEQ"
        "94QKTmvL4pI9rO18XNu95SLOxWPyTRe/5puQefIFd1kuFI9D6MTBANzFihuUcw4P8DYeAL/rJ49rsLib+jpQUooHJd28"
        "HQ3otjTk3ZvXNhv8BV4Qz/N7JjXZLP2i77NvvhKIu/OV+DPzKQ02i6Xjyptah1259A7X2Xxev3wlrHbqAJ4Wz7mwTP4d"
        "7eRjBn4LzfZzPb0K3uYpS5tIY3FgSOm8GJ3kjQMwbN4EvlqpCbS/nr49VsPJuPtAKT3dDHIOHlj65G7z7MOL10qhxk1H"
        "Bnv1mx7U2qUa2249hcuHzQHN5wvv8NQVfqeLtW7jcLlwtp5SoxLkX4RVL2HHYFQ0vhAryniB5zmv3ZfW6WvfvGdt59pm"
        "ehqU0lKejs4knQdOb+mVDQpK38MVa9w8A3fn6ibUmQdwh1xmmzBvPBBpIa0NYwH0U3cQP5WISKXdwJH0iA1Cvmlkz6jB"
        "ejNq8rY9GLVwPi4REZTqGmPPlQcTT05DwRvTQfuF6TPanOGH2FuZTSbawpnXDiyIzwMR5E3bGRQDnpSyj4nkkyZDbKa3"
        "4P97ukLfbVje1euBsObagxE0Wh3svL2F7vg3nQXB0vMe2LfzHlSj1DvC8DoDslM5eDFvGiOVg0s7QxbWNT4OXT0tg7yT"
        "DsRcDOVZBiGSWeq3jZPOicsu4x/C08z73kxmMEbLmG7Irp2LHD1TjMHX0mMRsDPPtLV3BphFXKXTQTEpK8LKqCAET6MF"
        "YYxczDr04TEGBVjIT71ScwahXSwxw/MgXtO1DO+m/CFFLnAyHTVY29MoKCP5wI7c73TIyoENvsIlR0KngunO6N+Z5xDj"
        "0CxX4VZezHyOtD7yufBqT0dDBcnlgYGpEiQzHsB3NosK/CrzeeSuyp/GcoUsx3hBkekpOOI9TYaelItAsJ0sGMh7jLIO"
        "Dac1O4rkZbZFikoZYIZNwWEP5pZ7Mi0MREKmkIlLnQUMlbnTvel0497OEoREzjIcJXEzcEaaBuXlpDtMGJTZFcmppzZO"
        "qX3B9GnZaSMdf7UKjolaNFjfe0szzn1OunFk11WlzNJNJ9zBSAVYXx7AC7Ii4lJjAbNT4VGlMcr9qp8oJ6KQ2kG9cOa/"
        "CGOWNlapn+vWmTctjKDudFbUnXwB3IWvvHh7Pg59QjoQ/nSWrbVm5VcWWlSXysEoAgULoARmZaTYNPmCz6RzBQzlXTuq"
        "XXoiDRRli9F5I1mmTGdnqoNe2xOvninE1l5MEHesDEF0e7tuB1RPJkijl8G5TkVyFdp70qpQ56TgAzbLLAIyy1cBZg5d"
        "e1ZtQ1lqfDncP30Bfu23clzL6gOlRRbMdI5/+AtuBNxZJgNI45nN9zLiIrL74l/3VO+C8TPgUbFHrnEHOSQPodh2Xhyl"
        "Mj2v98wXcL3hTP3OUo0qnCUA1cczwy0U1YzHFdjIuj7KKeHTDChD/kllNhANHReGz9qCMEoDgl1X/fXUGBTVSY+zsiqc"
        "aSe1wDKL65vdMyJwD719WWfsoZilP+CA1IKk4x8+/vT+w8ur8yFgCQo5q85dxDBtRPpG5DD+Fwpexj/Sn2WKXlHxUrGb"
        "TrBQRg/xcpIHYMzSK8xCmASjRfLhv2AAvgcV7Q5y1GUc2uTDGlLZZlUyy4fBeYczOTXiE3D0phI6IDOdNwoLU5rjkk7s"
        "d6blc2aKj/SfEYlLT6XlzVKFzN6zD7CON7CQsDSCkWYKggA9hH6YK/3BAxKzuCO2OrEWtSovvpvJHGTpq3qYSwCAzfNg"
        "RhakMMhxeYDU5pQKSmIOd2opsnuuZ6AGpFSgmNH59kPS6fByZ+U8dCxECKt0uMqmdoAfTEKtCtDdVUoiLfPAnSUZbUpK"
        "AyxhkUZhY6KBPRi2QFCCG1AuIxpBMy9vh4lyOcDGbN96JMlZKuTaR1USBJ+ndhFQh8QE27A4B7ryOU6S6cgilBjNTC41"
        "EmFKPMJ+GTjIZbQAUmv1g7BlehEQJnMXcuLlA4F0LGiDXQ1SGOE1/DopCkJR3ZEA2SlG9eOZNplD8BzeBUdlpTzsS3DT"
        "TlJFe0gzwkEua+k9jS/Ay/MMmt00/ojCTSdCL8ozMEC+G1V+WbVfxX/I9MWKzjKDwkYARIorJAdaEDDRXdbF99jDnlYc"
        "SQi16BkT4+CClzznqckW/Sr5yzKR4ZcxeNMlYgVrMoZRVHjz6iRHxAoLxnFrrJR8kSGbMLoRr8RcMFFmPyyumhXUG/ov"
        "7l5k1Rgl5O2dZsAPnd1lvCB/QplxlsHGymZBHuTElsuyA9dhzYNZnY3YzvVFBt+EpYJWeAL5E+ZlB+bV80I6S4uDdZhH"
        "QZsEPATKMDYO9MfBHgE5eaVIUC8LZ0dW4+TB6NVITjaqMWWvjysGY+o4u1lkPXLzRJRmiYxiu57eJRc+gi3ZUqJRIbhN"
        "VgSUX8vCFWD/8JoxT+1BCGiXF6B0D2JpzV6Q25I0UbY4aUGddbb+6OuIk5fNLNDCD6cWvtlZwQK8GxDImw7S1q16tYoH"
        "Ry58RSLM29ELOOcXu8oTvDufE1W51XBoJvTMAHJOZRoZDAttjZUWLxu8fW6WuTNalbdLokGMuVcrW6yI7Jb2ts6yg59O"
        "TSdaq+4q2CZ/io6zbucZWzwDsBy+aiiRMYAgYeOOwsm2BRBkJDekysO5xWRrAwai69+YFWTkdOI3AHXmjCR6ZJIqCi1L"
        "3EZPwnHYaSl6wOYtNjycI6CNT0/vnagKkNyLzHp6r+EL4wQmWvnyCILDDhCqowMPPtCiUbjFeykwUuaZT3PIgcSKmVKi"
        "9GBM9hVRmem9s/oB1TtjEaHOGRD4qFdCWOw/oWT/go0Ax8BGeF8mkmj0L/nRcq1gf7ciQXZJG0UpRYU7EblQX805EAPL"
        "c7RVo8kN3EsXA1F6Lhr5hR0Z1DxTnhN1gQd7pBhAiZk+i/hk/Ttw+MmDbZy5wbZZi270tnHmwveSN1CcSAWoX2tyJohm"
        "ZrDBZHMwYlxWy0hbbCwsywocgtCKaGOiWGFkBgycJe8mLYRuLkPBqXesl9ZaQJRMdFhU95pmchqHykRuQ+vHhgL/ZVUG"
        "VHZyZ0y9GOJ9MWWgX82IRNkbrCpebBoTxurV0IAxImFRhhQCiBE5OSVAtLHOIAkwViP7s+rd9pQ/ajSGVzXOBGNUGLPt"
        "R6UrbwIbsB3ZdVONfWI8Ub/MGtN0oxGxPKvHdo6+UEvyRR6tKptp9LWZyIJTLydnXAvCinVxddKIxZhsFZntakQn55Nw"
        "f1Ilx7poCU9Namv6Bi82TjkvOx2EPTtzRPTOp33JZfOW3gl3eFgJdkeN0v1ykR0FtUZDcISawTFJYoUroyXSQcYq3HaR"
        "yJEiExYDVPMS32a8e6ZfeJD+ZQ+6arCxOfzCm1bVY+REpj10ImyJG+cisEQBeN+FwHAvNrUeK+SYk103OgVGD1xwNE4m"
        "6mLIXyUYmDxYZyEVWdFWRjw0XdLcyhwQc3XO9uBp3ERADU+nXod9RcBxus+YZEXkSOfsKfYJNoOvZylBJMzaQ+iceOOC"
        "W5MgUA4RGJFONDBOviCKpy7xHGJaNKWdLHyrG0FEeuFeK1os2A+O3KuwsVe4+GW4OLdNYlRSTRxfjku+hFaVuHCe9byh"
        "7p5j1l1FizEaJmvW8DK2P3jG7xO9tb9gRs5rMbCoHQfm1ZiXVlNpnBlbsM8TozV7qZXCM2bV8m21wMmQ6aPXSjlnjJa0"
        "5Dw1wUZbv0qEU0LZfXLKOFXtKXiMsCv4OT2N0caqBc+SYNYlbRUi2LOvckuRDsmpmzMr0hYn2r5qXJDTB/ZlmyNTO+xs"
        "PPiOcYrUmw4D8mPvBWM+OckP5z6NSBbbKOm2HiMPnmkc8EUPkJUUkEqgR+t2d7V3nZ48OCmNfqvmq6u6KLTQuw5aZgD4"
        "2uKorrMTWU9qX171cyG80vtjREyCRvs3GQUsQoBXbvdEg8PpyK0KtluVNuNO37LqiVfsQeY9AdecVVSfu2N3JqEQGYwj"
        "D/gCKROJgSURS+GQBRriqANBQciAYbgIeBgpbACV04i9JgTwYmdrg3zHClaTHsBmdRewGHun0at/i80wOtJudeZwrNeq"
        "LbKY5dNbaoC9BpEwNlQ4l495JBkMHDHZmlwGIio+z+zJaVqMSZ8S1qrBXC09E28or7POzIysPqtygIIozJxP+TzMn7MG"
        "bS2yXI137iDCIfewRxzl8/BVlmG0/r1i8hYdnDmpnc3aEaWalTmSJLUybnW1/cvaK5JhmuLQ2uzCH8YtKA9Z5GeAjLkj"
        "AJv6iJnGIpUxg97YvemkMm4MnHW5ZRC7u/nsO/n6KHK9bko9XXhaLuMiuZU3Ob0e7dfICMmZ8+XFPfuaW3n9xiCeEXJ5"
        "d8zPMw5gkE2exFNyK9h3X0RXNFW1zctR0I4G9XC93P9Bi8emATbjjGPHvmXeNatbjc3sMWvzmnvLY9fmNZpATgHRLqXb"
        "IzSYqfAC9hpf9j033CCVBIMwM8d4lV0fOs1sfaDhxQN0u2kG6K+n+mOq0DidRUHldA8Zs+iOg+RWKAcPqtxq49R2Nuk9"
        "Zh6U/J4nRXtNPWIeWT0fB82Ro5NM2qQsWO843PeZ+xnCVFqfraKINXUcghRWUqOwXnNQxAfLUEzLGDJQBAXAsmsMsitX"
        "zPqEAMWnEwDnZbuONY6a24waBKHsG118MWQAeCztsZ/IDhJuw9QSccrwrASC4mCragDNEc0qd9uiAnE91ebH9IhtMLpX"
        "xiAg8xHn2RboWfSy/Rj1OUbjGNY5ROyxl8hPLU4Bbm90gbA7yQfgVB9oXObJHlvwPMBtzoO9asucPAwg52PAjpPkDO9Y"
        "LIy8B95b48rOjZHYHuTHHZ0ZdOROHwsRq6IN7vzhYHAbDhjA6edtz9cAxi8RkI+fj042a0APU9eYl0wZ2MLN/4muiLzY"
        "rbYEntsnZyIeAyvuORTeIZ654RFfvhAcoxHhgBTK4vN2DVoBRLVzeFlmUYirCzzshkZ8nlLfL3ADDKnplmdbr8Zp1F51"
        "WJG/VIIOllm1hVoBWPv/7cs3Am5VbryA0h5Mc+YbPJafNAC06hJEVVFUq9av1bTiy16teXlzTAu9EK7wNlRRVFtfsPT6"
        "uCU2Oir27/hycXWgo17Rn7fX9x9IKvN5hVfqWNxeR+NZd4/nOxq7/mBjH09dq+WMR/IxnoMi1cHRXCSw/hBw3TSLA1DY"
        "7oPC9fJZb7BTG1qLI7gxHjdBCIz6BoUOjj+b8+rYnOAI7XLCHt801AdSxuZkku0Qw3zKrRKGQF/FSod5a9xKGChXJ+Ma"
        "Xmnz3xwicno369Ou2MMatT3GMXP0LINbKM/EdHIYiKfcqjP8oASFgjOkhZzAOIQFuQmJGPH6IITTW1zMbaX4Bo3TITRF"
        "LDgRWjWC5WAFT2HRRWvGbzBWTLS5NXdpeBRWIuE6t3YhYqyXHLoad4Oh6sFdtFWfY2w7zAIr9MfvwtqtWNrjVl/0zD1O"
        "NSBjPp0I3ebUFxrdR32vgBRAX1vHn/B4PP7OZ2zAfYD4nGDULNBqY+G25yOUitFTkQPhBr/rqE1q4NWpzVu4M2eB01g1"
        "OcGLPeunJx1FdvSW6DuJuTH0LwCuwSTqTX3Mc9k/gHt3iWm2Kz/wq56oe4wSFIH5kG/tmFuJMKpSIPbnw+NVWmEDjovi"
        "oydG0F7V48H2hNDLnI63s38bt0aziLb7P+z4Hyhql3o="
    )
)

# crash-7a255a4c47f90d88943fe6db4184b4dc0774dcbb (zlib-compressed here): a Mulan XML file that
# declares encoding="utf-7". expat raised ValueError("multi-byte encodings are not supported").
XML_IN_UTF7 = zlib.decompress(
    base64.b64decode(
        "eNrFVNtq20AQTV/1FYMgCFpZ2Yt2JYU4seuYYrBTcJ3SB0OR7U0skOVWWrVJjX+y9IM6Wjm+pPFDH0q1YI5nZnfO7MzZ"
        "Vq7SWCfLDJziHBodeP6fOlYr1jpPJqVW8Agr6pL1vukBsnKh8mS6b5wuU1jlaube50plB/E/dvGzWMfWam2tAmhQT5zU"
        "3ysXKDC0AgOzHVwguNBC4WptUZd5wq0O5zW5X//x+8cXw83FHFxIa9uhQZnqpB9PVHpdxe+f1daavpQe7ezAPtza+ZF4"
        "n0SUMSzOI1RGUeQ2EAkhaY18LoVvUMgpEbVNCF8aFEVhDYKQRLxCNGJhbQkwzCASCmF8hDGfmMMokZTTGnEig00CIuqk"
        "YUTkJunL88ExHTJmhPANu0AEVLpVfikF8kQkWCBqLiz0w02Yz8gmW8RYjfwoonxTbIhVEFwUF9lfb8yvdfJp0D+5uHpY"
        "pPBN5QW2qWlTj9igsulylmT3TbvUd43Avrq0LtKqdwVgcFY07bnWX87PzhZlGmdesSzzqbpb5vfKy5Q+q0Ptp02QxQvV"
        "tDtpXBTMvryo/X/jfW28/ND7R/t3w+b4nWG38ZE1Ot3GoG+eBt+xLJwbcWRwuDzmCJ45YFJVqkDP1fb9sVrDbr896r2/"
        "AWeS5DN8jcbO13Kp1Wzs7F4ppNFgDgCcgs7jJMUbRo0tFirTKIj2aDTsvb0ddcGOgdpwczvoDnsddGz5TGCo4vRAotC7"
        "GXXfdYf7RufD9zjJimU2dgoYzfOymDuwwjk4kLBdxI8wtufJ2LZhhTNZKXeNRK7bo7Z1+sTsyK1CkpkrMOo3smcucDwC"
        "59uyHN9xbWG70nUoIhypp6J33divomovqSjC5x3JgFXC5F7AhKyjXLq3a9uh8FjrotqByuIyMHrCB8BnrpG4JOynUTjx"
        "qRGYT7mROA0EZwa9zJBSziWvjluTSmmW9xs49Cn6"
    )
)


# crash-d6c5511b4d788aa6d2a957ec6ab058e9cadd6988 (zlib-compressed here): a Mulan XML file that
# declares encoding="utf-6", which no codec implements. expat raised LookupError.
XML_IN_UNKNOWN_ENCODING = zlib.decompress(
    base64.b64decode(
        "eNq9j81rwkAQxT3nrxgWSi6buB8aVIwKvbb3XjfJqIHNJuyHVYP/e7ctLW0PPZUyMDze/B682VnUyre9gdStILsH"
        "niY75b1tq+ARLjAKym5frSuY0KFt62TXKK+S8ZaMErJJEErHcw1joOkJnlNKzvRCvmWrz+wdKKj7rkPjocJ9bxH8"
        "EYWUlOVsJhkXtCjoPBesmBeCciloLJJzJhZyGYWY8aWcRSHnnLHoxOFvmyWTp8eHyXp77jSc0Lr4XEl4zgigqfum"
        "NYeSBL/PCrLdJGutKtQOImxcSY7eD6vptAtamdz1wdav3Q6YG/TTd5R8hMCoDkuiOnXFJnNhsK3DhmzW7+AP7KiG"
        "4W/7L/69/yUbNKpfIKvdJmHJC8bKt0s="
    )
)


def split_input(tmp_path, data):
    arff, sep, xml = data.partition(XML_SEPARATOR)
    path = tmp_path / "input.arff"
    path.write_bytes(arff)
    if not sep:
        return path, None
    xml_path = tmp_path / "labels.xml"
    xml_path.write_bytes(xml)
    return path, xml_path


@pytest.mark.parametrize("options", OPTIONS)
def test_damaged_bzip2_stream_is_an_arff_error(tmp_path, options):
    path, _ = split_input(tmp_path, DAMAGED_BZIP2)
    load_error, iter_error = outcomes(path, options)
    assert load_error == iter_error
    assert load_error == (
        f"{path}: cannot decompress the file (bzip2 data damaged or truncated): Invalid data stream"
    )


@pytest.mark.parametrize(
    "compress, kind",
    [(gzip.compress, "gzip"), (bz2.compress, "bzip2"), (lzma.compress, "xz/lzma")],
)
@pytest.mark.parametrize("damage", ["truncate-header", "truncate-data", "flip"])
def test_damaged_compressed_files_are_arff_errors(tmp_path, compress, kind, damage):
    text = b"@relation 'r: -C 1'\n@attribute y {0,1}\n@attribute a numeric\n@data\n"
    blob = bytearray(compress(text + b"1,2.5\n" * 30_000))
    if damage == "truncate-header":
        blob = blob[:8]
    elif damage == "truncate-data":
        blob = blob[: len(blob) // 2]
    else:
        blob[len(blob) // 2] ^= 0xFF
    path = tmp_path / "damaged.arff"
    path.write_bytes(bytes(blob))
    for read in (lambda: load_arff(path), lambda: list(iter_arff(path, 1000))):
        with pytest.raises(ArffError) as info:
            read()
        # a flipped byte may also decode to text that is not valid ARFF, found before the checksum
        if damage != "flip":
            assert f"cannot decompress the file ({kind} data damaged or truncated" in str(
                info.value
            )


def test_a_missing_compressed_file_is_still_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_arff(tmp_path / "absent.arff.gz")


@pytest.mark.parametrize("options", OPTIONS)
def test_undecodable_byte_is_reported_on_its_line_after_earlier_faults(tmp_path, options):
    path, _ = split_input(tmp_path, UNDECODABLE_AFTER_A_FAULTY_LINE)
    assert UNDECODABLE_AFTER_A_FAULTY_LINE.split(b"\n")[307].find(b"\xb4") >= 0  # line 308
    load_error, iter_error = outcomes(path, options)
    assert load_error == iter_error
    if options.get("label_location") == ("last", 1):
        assert load_error.startswith(f"{path}, line 306: value '0.6922nominal24' of numeric")


def test_undecodable_byte_line_is_exact_in_small_files(tmp_path):
    header = "@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n"
    path = tmp_path / "latin.arff"
    path.write_bytes((header + "1,0\n2,1\n% caf\u00e9\n3,0\n").encode("latin-1"))
    for read in (
        lambda: load_arff(path, labels=["y"]),
        lambda: list(iter_arff(path, 1, labels=["y"])),
    ):
        with pytest.raises(
            ArffError, match=r", line 7: cannot decode the line as utf-8: byte 0xe9"
        ):
            read()
    # an error on an earlier line comes first
    path.write_bytes((header + "1,0\n2,5\ncaf\u00e9,1\n").encode("latin-1"))
    with pytest.raises(ArffError, match=r", line 6: label 'y' has the value 5"):
        load_arff(path, labels=["y"])
    # in the header
    path.write_bytes(("@relation caf\u00e9\n" + header[12:]).encode("latin-1"))
    with pytest.raises(ArffError, match=r", line 1: cannot decode the line as utf-8: byte 0xe9"):
        load_arff(path, labels=["y"])
    assert load_arff(path, labels=["y"], encoding="latin-1").relation == "caf\u00e9"


def test_xml_in_an_encoding_expat_cannot_read_is_an_arff_error(tmp_path):
    path, xml = split_input(tmp_path, XML_IN_UTF7)
    assert b'encoding="utf-7"' in XML_IN_UTF7
    load_error, iter_error = outcomes(path, {}, xml=xml)
    assert load_error == iter_error
    assert load_error == f"{xml}: unsupported XML: multi-byte encodings are not supported"
    for options in OPTIONS:
        a, b = outcomes(path, options)
        assert a == b


def test_quoted_question_mark_cannot_be_a_nominal_value(tmp_path):
    """Found by test_fuzz_arff: a nominal value '?' read back as a missing value."""
    path = tmp_path / "q.arff"
    path.write_text(
        "@relation 'rel: -C 3'\n@attribute '00' {0,1}\n@attribute '000' {0,1}\n"
        "@attribute '0000' {0,1}\n@attribute '0' numeric\n@attribute '1' numeric\n"
        "@attribute '2' {'?'}\n@attribute '3' numeric\n@data\n0,0,0,0,0.0,'?',0.0\n"
    )
    with pytest.raises(ArffError, match=r", line 7: nominal attribute '2' declares the value '\?'"):
        load_arff(path, nominal="onehot")


@pytest.mark.parametrize(
    "encoding, exc, match",
    [
        ("no-such-codec", ValueError, "encoding 'no-such-codec' is not a known text encoding"),
        ("hex", ValueError, "encoding 'hex' is not a known text encoding"),
        (8, TypeError, "encoding must be the name of a text encoding, got 8"),
    ],
)
def test_unknown_encoding_is_refused_before_reading(tmp_path, encoding, exc, match):
    path = tmp_path / "r.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,0\n")
    with pytest.raises(exc, match=match):
        load_arff(path, labels=["y"], encoding=encoding)
    with pytest.raises(exc, match=match):
        iter_arff(path, labels=["y"], encoding=encoding)


def test_utf16_decoding_failure_is_an_arff_error(tmp_path):
    path = tmp_path / "r.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute y {0,1}\n@data\n1,0\n")
    with pytest.raises(ArffError, match="cannot decode the header as utf-16"):
        load_arff(path, labels=["y"], encoding="utf-16")


def test_xml_in_an_unknown_encoding_is_an_arff_error(tmp_path):
    path, xml = split_input(tmp_path, XML_IN_UNKNOWN_ENCODING)
    assert b'encoding="utf-6"' in XML_IN_UNKNOWN_ENCODING
    load_error, iter_error = outcomes(path, {}, xml=xml)
    assert load_error == iter_error == f"{xml}: unsupported XML: unknown encoding: utf-6"


def test_a_tiny_compressed_file_that_expands_to_millions_of_lines(tmp_path):
    """A random fuzzing run timed out on a mutated compressed seed that expands enormously. Such a
    file is read in full, line by line, and ends in the right error (here: blank lines only)."""
    n = 2_000_000
    path = tmp_path / "expands.arff.bz2"
    path.write_bytes(bz2.compress(b"@relation r\n" + b"\n" * n, 9))
    assert path.stat().st_size < 200
    with pytest.raises(ArffError, match=rf"line {n + 1}\b.*no @data section"):
        load_arff(path)
