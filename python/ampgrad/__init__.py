from ._C import *
