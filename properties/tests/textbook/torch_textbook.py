"""Textbook torch implementations (see __init__.py): as tutorials write them."""

import torch
import torch.nn.functional as F


def _rows_all_masked(x):
    return torch.isneginf(x).all(dim=-1, keepdim=True)


def logsumexp_max_shift(x, k=1.0):
    z = k * x
    m = z.max(dim=-1, keepdim=True).values
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # an all-masked row: shift by 0
    s = torch.exp(z - m).sum(dim=-1, keepdim=True)
    ok = s > 0
    out = torch.where(ok, m + torch.log(torch.where(ok, s, torch.ones_like(s))), torch.full_like(s, -torch.inf))
    return (out / k).squeeze(-1)


def logsumexp_native(x, k=1.0):
    empty = _rows_all_masked(x)
    z = torch.where(empty, torch.zeros_like(x), k * x)  # torch.logsumexp's gradient is NaN on an all -inf row
    return torch.where(empty.squeeze(-1), torch.full_like(z[..., 0], -torch.inf), torch.logsumexp(z, dim=-1) / k)


def cross_entropy_log_softmax(logits, target):
    logp = F.log_softmax(logits, dim=-1)
    if not torch.is_floating_point(target):
        return -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    masked = torch.isneginf(logp) & (target == 0)  # a masked class with weight 0 contributes nothing
    return -(target * torch.where(masked, torch.zeros_like(logp), logp)).sum(dim=-1)


def logistic_softplus(f, l):
    return F.softplus(-l * f)


def dice_plain(probs, targets, smooth=0.0, squared=False):
    num = 2 * (probs * targets).sum() + smooth
    den = ((probs ** 2).sum() + (targets ** 2).sum() if squared else probs.sum() + targets.sum()) + smooth
    empty = den == 0
    return torch.where(empty, torch.ones_like(den), num / torch.where(empty, torch.ones_like(den), den))


def jaccard_plain(probs, targets, smooth=0.0):
    inter = (probs * targets).sum()
    den = probs.sum() + targets.sum() - inter + smooth
    empty = den == 0
    return torch.where(empty, torch.ones_like(den), (inter + smooth) / torch.where(empty, torch.ones_like(den), den))


def soft_f1_plain(probs, targets, eps=0.0):
    num = 2 * (probs * targets).sum(dim=0)
    den = probs.sum(dim=0) + targets.sum(dim=0) + eps
    empty = den == 0
    return torch.where(empty, torch.ones_like(den), num / torch.where(empty, torch.ones_like(den), den))


def soft_auc_all_pairs(scores, labels, tau=1.0):
    lab = labels.to(scores.dtype)
    pair = lab.unsqueeze(-1) * (1 - lab).unsqueeze(-2)  # positive i, negative j
    s = torch.sigmoid((scores.unsqueeze(-1) - scores.unsqueeze(-2)) / tau)
    return (pair * s).sum(dim=(-2, -1)) / (lab.sum(-1) * (1 - lab).sum(-1))


# -- smoothing -------------------------------------------------------------------------------

def softmax_native(x, k=1.0):
    empty = _rows_all_masked(x)
    z = torch.where(empty, torch.zeros_like(x), k * x)  # torch.softmax is NaN on an all -inf row
    return torch.where(empty, torch.zeros_like(x), torch.softmax(z, dim=-1))


def soft_argmax_softmax_index(x, k=1.0):
    empty = _rows_all_masked(x)
    z = torch.where(empty, torch.zeros_like(x), k * x)
    p = torch.where(empty, torch.zeros_like(x), torch.softmax(z, dim=-1))
    idx = torch.arange(x.shape[-1], dtype=x.dtype, device=x.device)
    return (p * idx).sum(dim=-1)


# -- classification --------------------------------------------------------------------------

def entropy_plogp(p):
    pos = p > 0  # 0·log 0 = 0
    return -torch.where(pos, p * torch.log(torch.where(pos, p, torch.ones_like(p))), torch.zeros_like(p)).sum(dim=-1)


def kl_divergence_plogpq(p, q):
    pos = p > 0  # F.kl_div(q.log(), p) without its NaN at p = q = 0: 0·log(0/q) = 0
    one = torch.ones_like(p)
    logp = torch.log(torch.where(pos, p, one))
    logq = torch.log(torch.where(pos, q, one))
    return torch.where(pos, p * (logp - logq), torch.zeros_like(p)).sum(dim=-1)


def soft_accuracy_gather(logits, labels):
    return torch.softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def hinge_clamp(f, l):
    return torch.clamp(1 - l * f, min=0)


# -- multi-label (ZLPR) ----------------------------------------------------------------------

def zlpr_logsumexp_zero(scores, targets):
    """Su Jianlin's multilabel_categorical_crossentropy, soft-label form: logsumexp over [w·e^{±s}, 1]."""
    neg_w = targets < 1
    pos_w = targets > 0
    one = torch.ones_like(targets)
    ninf = torch.full_like(scores, -torch.inf)
    neg = torch.where(neg_w, scores + torch.log(torch.where(neg_w, 1 - targets, one)), ninf)
    pos = torch.where(pos_w, -scores + torch.log(torch.where(pos_w, targets, one)), ninf)
    zeros = torch.zeros_like(scores[..., :1])
    return torch.logsumexp(torch.cat([neg, zeros], dim=-1), dim=-1) + torch.logsumexp(torch.cat([pos, zeros], dim=-1), dim=-1)


def zlpr_probability_sigmoid(scores):
    return torch.sigmoid(2 * scores)


# -- Lovász (Berman et al., lovasz_losses.py) -------------------------------------------------

def _lovasz_grad(gt_sorted):
    gts = gt_sorted.sum()
    intersection = gts - gt_sorted.cumsum(0)
    union = gts + (1 - gt_sorted).cumsum(0)
    jaccard = 1.0 - intersection / union
    if len(gt_sorted) > 1:
        jaccard = torch.cat([jaccard[:1], jaccard[1:] - jaccard[:-1]])
    return jaccard


def lovasz_hinge_berman(logits, labels):
    logits = logits.reshape(-1)
    labels = labels.reshape(-1).to(logits.dtype)
    signs = 2.0 * labels - 1.0
    errors = 1.0 - logits * signs
    errors_sorted, perm = torch.sort(errors, dim=0, descending=True)
    grad = _lovasz_grad(labels[perm])
    return torch.dot(F.relu(errors_sorted), grad)


def lovasz_softmax_berman(probs, labels):
    C = probs.shape[-1]
    probs = probs.reshape(-1, C)
    labels = labels.reshape(-1)
    losses = []
    for c in range(C):
        fg = (labels == c).to(probs.dtype)
        if fg.sum() == 0:  # classes='present'
            continue
        errors = (fg - probs[:, c]).abs()
        errors_sorted, perm = torch.sort(errors, 0, descending=True)
        losses.append(torch.dot(errors_sorted, _lovasz_grad(fg[perm])))
    return torch.stack(losses).mean()


# -- ranking ---------------------------------------------------------------------------------

def auc_mann_whitney(scores, labels):
    lab = labels.to(scores.dtype)
    pair = lab.unsqueeze(-1) * (1 - lab).unsqueeze(-2)  # positive i, negative j
    si, sj = scores.unsqueeze(-1), scores.unsqueeze(-2)
    h = (si > sj).to(scores.dtype) + 0.5 * (si == sj).to(scores.dtype)
    return (pair * h).sum(dim=(-2, -1)) / (lab.sum(-1) * (1 - lab).sum(-1))


# -- boxes (torchvision box_iou / generalized_box_iou_loss / distance_ / complete_box_iou_loss) --
# Half precision is upcast to float32 (pixel areas overflow float16) and the result cast back.

def _upcast(a, b):
    dt = torch.promote_types(a.dtype, b.dtype)
    work = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    return a.to(work), b.to(work), dt


def _div0(num, den):
    """num / den, 0 where den == 0 (degenerate boxes), without NaN in the gradient."""
    ok = den > 0
    return torch.where(ok, num / torch.where(ok, den, torch.ones_like(den)), torch.zeros_like(num))


def _iou_parts(a, b):
    x1, y1, x2, y2 = a.unbind(-1)
    x1g, y1g, x2g, y2g = b.unbind(-1)
    w = (torch.min(x2, x2g) - torch.max(x1, x1g)).clamp(min=0)
    h = (torch.min(y2, y2g) - torch.max(y1, y1g)).clamp(min=0)
    inter = w * h
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter
    iou = _div0(inter, union)
    xc1, yc1 = torch.min(x1, x1g), torch.min(y1, y1g)
    xc2, yc2 = torch.max(x2, x2g), torch.max(y2, y2g)
    return iou, union, (xc1, yc1, xc2, yc2)


def box_iou_upcast(a, b):
    a, b, dt = _upcast(a, b)
    iou, _, _ = _iou_parts(a, b)
    return iou.to(dt)


def giou_upcast(a, b):
    a, b, dt = _upcast(a, b)
    iou, union, (xc1, yc1, xc2, yc2) = _iou_parts(a, b)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    return (iou - _div0(area_c - union, area_c)).to(dt)


def _diou(a, b):
    iou, _, (xc1, yc1, xc2, yc2) = _iou_parts(a, b)
    diag2 = (xc2 - xc1) ** 2 + (yc2 - yc1) ** 2
    x1, y1, x2, y2 = a.unbind(-1)
    x1g, y1g, x2g, y2g = b.unbind(-1)
    rho2 = ((x1 + x2) / 2 - (x1g + x2g) / 2) ** 2 + ((y1 + y2) / 2 - (y1g + y2g) / 2) ** 2
    return iou, iou - _div0(rho2, diag2)


def diou_upcast(a, b):
    a, b, dt = _upcast(a, b)
    return _diou(a, b)[1].to(dt)


def _atan_wh(w, h):
    ok = h > 0  # atan(w/h); π/2 for a flat box, 0 for a point
    flat = torch.where(w > 0, torch.full_like(w, torch.pi / 2), torch.zeros_like(w))
    return torch.where(ok, torch.atan(w / torch.where(ok, h, torch.ones_like(h))), flat)


def ciou_upcast(a, b):
    a, b, dt = _upcast(a, b)
    iou, diou = _diou(a, b)
    x1, y1, x2, y2 = a.unbind(-1)
    x1g, y1g, x2g, y2g = b.unbind(-1)
    v = (4 / torch.pi ** 2) * (_atan_wh(x2g - x1g, y2g - y1g) - _atan_wh(x2 - x1, y2 - y1)) ** 2
    with torch.no_grad():
        alpha = _div0(v, 1 - iou + v)
    return (diou - alpha * v).to(dt)


def soft_topk_recursion(x, topk, k=1.0):
    """Seed 004's recursion, as written there: shift by the min, then topk softmax passes."""
    x = x - x.min(dim=-1, keepdim=True).values
    p = torch.zeros_like(x)
    for _ in range(int(topk)):
        p = p + torch.softmax(k * (1 - p) * x, dim=-1)
    return p
